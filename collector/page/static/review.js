// The review form of the evaluation view: posts the correction as JSON, says what the corrections
// changed, and sends the reviewer back to the queue. Keys (outside text fields): r right, w wrong,
// s save, q back to the queue; Escape leaves a text field. The reviewer's name is remembered in this browser.
(function () {
  const form = document.getElementById("review-form");
  if (!form) return;
  const status = document.getElementById("review-status");
  const name = document.getElementById("reviewer");
  if (!name.value) name.value = localStorage.getItem("ragpulse-reviewer") || "";

  function share(value) {
    return `${Math.round(value * 100)}%`;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const outcome = form.querySelector("input[name=outcome_right]:checked");
    const claims = Array.from(form.querySelectorAll("#review-claims li")).flatMap((li) => {
      const picked = li.querySelector("input:checked");
      return picked ? [{ index: Number(li.dataset.index), verdict: picked.value }] : [];
    });
    const note = document.getElementById("review-note");
    const body = {
      metric: form.dataset.metric,
      reviewer: name.value,
      outcome_right: outcome ? outcome.value === "true" : null,
      claims: claims,
      note: note && !note.disabled && note.value ? note.value : null,
    };
    localStorage.setItem("ragpulse-reviewer", name.value);
    status.textContent = "saving…";
    try {
      const response = await fetch(form.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await response.json();
      if (!response.ok) {
        status.textContent = `not saved: ${answer.error}`;
        return;
      }
      const words = answer.fits.map(
        (f) =>
          `${f.metric} (${f.service}, ${f.judge}): agreement with reviewers ${share(f.agreement_shipped)} ` +
          `with the shipped threshold, ${share(f.agreement_fitted)} refitted on ${f.corrections} ` +
          `corrections (held out); ${f.applied ? "the fitted threshold " + f.fitted.toFixed(2) + " is in use" : "the shipped threshold stays"}`
      );
      status.textContent = ["Saved.", ...words].join(" ");
      status.dataset.saved = "1";
      document.getElementById("back-to-queue").focus();
    } catch (error) {
      status.textContent = "not saved: the sidecar did not answer";
    }
  });

  const typing = (el) => el && (el.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName) && el.type !== "radio");
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();  // then the keys work again
      return;
    }
    const click = (id) => document.getElementById(id) && document.getElementById(id).click();
    if (event.key === "r") click("outcome-right");
    else if (event.key === "w") click("outcome-wrong");
    else if (event.key === "s") form.requestSubmit();
    else if (event.key === "q") click("back-to-queue");
  });
})();
