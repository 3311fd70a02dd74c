// The template form's checks as you type: the form is posted (same
// origin) to the check endpoint, which runs the library's authoring
// rules without storing anything and answers the field errors and the
// preview. This script only shows them; saving checks again.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("tpl-form");
  if (!form || !form.dataset.check) return;
  const preview = document.getElementById("tpl-preview");
  const problem = document.getElementById("form-problem");
  const status = document.getElementById("check-status");
  const examples = document.getElementById("body-examples");
  let timer = null;
  let seq = 0;

  // showErrors puts each message next to its field and clears the others.
  const showErrors = (errors) => {
    for (const el of form.querySelectorAll("p.error[id^='err-']")) {
      const field = el.id.slice(4);
      const msg = errors[field] || "";
      el.textContent = msg;
      el.hidden = msg === "";
      const box = el.closest(".field");
      if (box) box.classList.toggle("invalid", msg !== "");
      const input = document.getElementById("f-" + field);
      if (input) {
        if (msg) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
      }
    }
  };

  // syncExamples keeps one example input per body variable, keeping the
  // values typed so far.
  const syncExamples = (vars) => {
    if (!examples) return;
    const have = [...examples.querySelectorAll("[data-var]")].map((el) => Number(el.dataset.var));
    if (have.length === vars.length && have.every((v, i) => v === vars[i])) return;
    const values = {};
    for (const input of examples.querySelectorAll("input")) values[input.name] = input.value;
    examples.replaceChildren();
    for (const n of vars) {
      const name = "body_example_" + n;
      const box = document.createElement("div");
      box.className = "field";
      box.dataset.var = String(n);
      const label = document.createElement("label");
      label.htmlFor = "f-" + name;
      label.textContent = "Example of {{" + n + "}}";
      const input = document.createElement("input");
      input.id = "f-" + name;
      input.name = name;
      input.value = values[name] || "";
      input.setAttribute("aria-describedby", "err-" + name);
      const err = document.createElement("p");
      err.className = "error";
      err.id = "err-" + name;
      err.hidden = true;
      box.append(label, input, err);
      examples.append(box);
    }
  };

  const check = async () => {
    const mine = ++seq;
    try {
      const res = await fetch(form.dataset.check, {
        method: "POST",
        // The text fields only: the sample file is uploaded on save.
        body: new URLSearchParams([...new FormData(form)].filter(([, v]) => typeof v === "string")),
        headers: { "Accept": "application/json" },
        credentials: "same-origin",
      });
      if (!res.ok || mine !== seq) return;
      const out = await res.json();
      syncExamples(out.body_vars || []);
      showErrors(out.errors || {});
      problem.textContent = out.problem || "";
      problem.hidden = !out.problem;
      preview.innerHTML = out.preview; // the server's own escaped template output
      status.textContent = out.ok ? "Looks good." : "Not saved yet: see the messages next to the fields.";
    } catch {
      status.textContent = "";
    }
  };

  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
  form.addEventListener("change", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 50);
  });
});
