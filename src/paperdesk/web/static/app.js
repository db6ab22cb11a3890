// Progressive enhancement only: every page works without this file.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Render $…$ / $$…$$ / \(…\) math in titles and abstracts; the raw TeX stays as text
  // when scripts are off. KaTeX never evaluates anything: it only builds spans.
  if (window.renderMathInElement) {
    for (const el of document.querySelectorAll(".tex")) {
      try {
        window.renderMathInElement(el, {
          delimiters: [
            { left: "$$", right: "$$", display: true },
            { left: "$", right: "$", display: false },
            { left: "\\(", right: "\\)", display: false },
            { left: "\\[", right: "\\]", display: true },
          ],
          throwOnError: false,
          strict: "ignore",
          // Hostile TeX: no \href/\includegraphics (trust), no size over 10em
          // (`\rule{10000em}{10000em}` would cover the page), at most 100 macro expansions
          // (`\def\x{\x\x}` loops); the CSS keeps what is left inside its element.
          trust: false,
          maxSize: 10,
          maxExpand: 100,
        });
        el.classList.add("math-rendered");
      } catch (e) { /* leave the raw text */ }
    }
  }
  // Copy buttons (citation exports).
  for (const btn of document.querySelectorAll("button.copy[data-copy]")) {
    const src = document.getElementById(btn.dataset.copy);
    if (!src || !navigator.clipboard) continue;
    btn.hidden = false;
    btn.addEventListener("click", async () => {
      await navigator.clipboard.writeText(src.textContent);
      btn.textContent = "Copied";
      setTimeout(() => { btn.textContent = "Copy BibTeX"; }, 1500);
    });
  }
  // While the stages after ingest run, keep the status line current (/api/status).
  const line = document.querySelector(".pipeline-status[data-state=running]");
  if (line && window.fetch) {
    const marks = { done: "\u2713", running: "(running)", waiting: "(waiting)", failed: "(failed)" };
    const poll = async () => {
      try {
        const st = await (await fetch("/api/status", { cache: "no-store" })).json();
        for (const s of st.stages || []) {
          const el = line.querySelector(`.stage[data-stage="${s.name}"]`);
          if (el) { el.dataset.state = s.state; el.textContent = `${s.name} ${marks[s.state] || s.state}`; }
        }
        line.dataset.state = st.state;
        if (st.state === "running") { setTimeout(poll, 5000); return; }
        line.firstChild.textContent = st.state === "ready"
          ? "Every stage has finished: reload for the complete pages. " : `Stages ${st.state}: `;
      } catch (e) { setTimeout(poll, 15000); }
    };
    setTimeout(poll, 5000);
  }
  // Stars: filled for the signed-in user's saved works (/api/me; the pages themselves are
  // the same for everyone, so they can be cached), toggled in place through the JSON API
  // with the page's CSRF token. Without scripts the star's form saves and comes back.
  const stars = document.querySelectorAll("button.star[data-item]");
  const label = (b) => b.textContent.trim().length > 1;  // "☆ Save" rather than "☆"
  const show = (b, on) => {
    b.dataset.saved = on ? "1" : "0";
    b.setAttribute("aria-pressed", on ? "true" : "false");
    b.title = on ? "Saved: click to remove from your library" : "Save to your library";
    b.textContent = label(b) ? (on ? "\u2605 Saved" : "\u2606 Save") : (on ? "\u2605" : "\u2606");
  };
  if (stars.length && window.fetch) {
    fetch("/api/me", { cache: "no-store", credentials: "same-origin" }).then((r) => r.json()).then((me) => {
      if (!me.user) return;
      const saved = new Set(me.saved || []);
      for (const b of stars) {
        show(b, saved.has(b.dataset.item));
        b.form.addEventListener("submit", async (ev) => {
          ev.preventDefault();
          const on = b.dataset.saved === "1";
          const r = await fetch(on ? "/api/library/remove" : "/api/library/add", {
            method: "POST", credentials: "same-origin",
            headers: { "Content-Type": "application/json", "X-CSRF-Token": b.form.elements.csrf.value },
            body: JSON.stringify({ item: b.dataset.item }),
          });
          if (r.ok) show(b, !on);
        });
      }
    }).catch(() => {});
  }
  // The day picker and subject menu navigate as soon as they change.
  for (const el of document.querySelectorAll("form.pick input, form.pick select")) {
    el.addEventListener("change", () => el.form.submit());
  }
});
