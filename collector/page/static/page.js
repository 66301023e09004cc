// ragpulse page (no library): the overview reloads in place; the evaluations list never does, it says
// how many new evaluations arrived and lets the reader show them; keys move through the list.
(function () {
  const every = parseFloat(document.body.dataset.refreshS || "0") * 1000;
  const pause = document.getElementById("pause-refresh");

  // The overview: replaced every few seconds, unless the reader is selecting text or using a control.
  const main = document.querySelector("main[data-refresh]");
  async function reload() {
    if (document.hidden || (pause && pause.checked)) return;
    if (String(window.getSelection() || "") !== "" || main.contains(document.activeElement)) return;
    try {
      const response = await fetch(location.href, { credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("main");
      if (fresh && !main.contains(document.activeElement)) main.innerHTML = fresh.innerHTML;
    } catch (error) {
      // the sidecar is restarting: try again at the next tick
    }
  }
  if (main && every > 0) setInterval(reload, every);

  // The evaluations list: its rows stay as they were read; a link says what arrived since.
  const news = document.getElementById("new-evaluations");
  async function poll() {
    if (document.hidden) return;
    try {
      const response = await fetch(news.dataset.poll, { credentials: "same-origin" });
      if (!response.ok) return;
      const count = (await response.json()).new;
      if (count > 0) {
        news.textContent = `${count} new evaluation${count === 1 ? "" : "s"} — show`;
        news.hidden = false;
      }
    } catch (error) {
      // the sidecar is restarting: try again at the next tick
    }
  }
  if (news && every > 0) setInterval(poll, every);

  // Keys on the list: / search, j/k move between rows (Enter opens), n/p next/previous page.
  const table = document.querySelector("table.keyed");  // the evaluations list, the review queue
  if (!table) return;
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(el.tagName));
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const links = Array.from(table.querySelectorAll("a.open"));
    const at = links.indexOf(document.activeElement);
    if (event.key === "/") {
      const search = document.getElementById("q");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
    } else if ((event.key === "j" || event.key === "k") && links.length) {
      event.preventDefault();
      const next = event.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
      links[at < 0 ? 0 : next].focus();
      links[at < 0 ? 0 : next].closest("tr").scrollIntoView({ block: "nearest" });
    } else if (event.key === "n" || event.key === "p") {
      const link = document.getElementById(event.key === "n" ? "next-page" : "prev-page");
      if (link) link.click();
    }
  });
})();
