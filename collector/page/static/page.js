// ragpulse page: reload the overview and the lists in place every few seconds (no library).
(function () {
  const main = document.querySelector("main[data-refresh]");
  if (!main) return;
  const every = parseFloat(main.dataset.refresh) * 1000;
  const pause = document.getElementById("pause-refresh");
  async function reload() {
    if (document.hidden || (pause && pause.checked)) return;
    try {
      const response = await fetch(location.href, { credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("main");
      if (fresh && !main.contains(document.activeElement)) main.innerHTML = fresh.innerHTML;
    } catch (error) {
      // the sidecar is restarting: try again at the next tick
    }
  }
  setInterval(reload, every);
})();
