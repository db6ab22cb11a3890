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
          trust: false,
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
  // The day picker and subject menu navigate as soon as they change.
  for (const el of document.querySelectorAll("form.pick input, form.pick select")) {
    el.addEventListener("change", () => el.form.submit());
  }
});
