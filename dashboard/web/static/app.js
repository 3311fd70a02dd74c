// The dashboard's script. Every form works without it; it adds
// conveniences: submitting the workspace switcher on change, copy buttons,
// confirmations, and live updates of pages that ask for them.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const el of document.querySelectorAll("select[data-autosubmit]")) {
    el.addEventListener("change", () => { if (el.value) el.form.submit(); });
  }
  for (const btn of document.querySelectorAll("button[data-copy]")) {
    btn.hidden = false;
    btn.addEventListener("click", async () => {
      const src = document.getElementById(btn.dataset.copy);
      try {
        await navigator.clipboard.writeText(src.textContent.trim());
        btn.textContent = "Copied";
      } catch {
        const range = document.createRange();
        range.selectNodeContents(src);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        btn.textContent = "Selected: press Ctrl+C";
      }
    });
  }
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (ev) => {
      if (!window.confirm(form.dataset.confirm)) ev.preventDefault();
    });
  }
  // A region with data-refresh="url" is replaced by the same region of
  // the page at url every few seconds while the page is open, until that
  // region says data-final="true" (with data-reload-final="true", the
  // page is then reloaded whole).
  for (const region of document.querySelectorAll("[data-refresh]")) {
    const every = Number(region.dataset.every || 2000);
    const tick = async () => {
      try {
        const res = await fetch(region.dataset.refresh, { headers: { "Accept": "text/html" } });
        if (res.ok) {
          const doc = new DOMParser().parseFromString(await res.text(), "text/html");
          const fresh = doc.getElementById(region.id);
          if (fresh && fresh.innerHTML !== region.innerHTML) region.innerHTML = fresh.innerHTML;
          if (fresh && fresh.dataset.final === "true") {
            // A region that asks for it reloads the whole page once its
            // wait is over (a reviewed template gains its test form).
            if (region.dataset.reloadFinal === "true") window.location.reload();
            return;
          }
        }
      } catch { /* the next tick tries again */ }
      setTimeout(tick, every);
    };
    setTimeout(tick, every);
  }
});
