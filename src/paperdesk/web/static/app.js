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
  // The day picker and subject menu navigate as soon as they change.
  for (const el of document.querySelectorAll("form.pick input, form.pick select")) {
    el.addEventListener("change", () => el.form.submit());
  }
});
