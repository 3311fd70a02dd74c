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

  // Button rows, in place: "Add a button" adds an empty row from the
  // page's pattern, "Remove" drops its row, the rows are numbered 1, 2,
  // ... again (the names the server reads), a row shows the inputs its
  // type needs, and the type choices past the library's limits are
  // disabled. Without this script the same buttons post the form and the
  // server re-renders it.
  const buttons = document.getElementById("buttons");
  const rows = document.getElementById("button-rows");
  const add = document.getElementById("add-button");
  const pattern = document.getElementById("button-row-template");
  const maxButtons = buttons ? Number(buttons.dataset.max) : 0;
  const valueLabels = { URL: "URL", PHONE_NUMBER: "Phone number", COPY_CODE: "Example code" };
  const kindOf = (type) => (type === "URL" || type === "PHONE_NUMBER" ? "cta" : type);
  const limits = { QUICK_REPLY: 3, cta: 2, COPY_CODE: 1 };

  const renumber = () => {
    const all = [...rows.querySelectorAll(".button-row")];
    all.forEach((row, i) => {
      const n = String(i + 1);
      row.dataset.row = n;
      for (const el of row.querySelectorAll("[id], [name], [for], [aria-describedby], [data-field]")) {
        for (const attr of ["id", "name", "for", "aria-describedby", "data-field"]) {
          const v = el.getAttribute(attr);
          if (v !== null) el.setAttribute(attr, v.replace(/(button_(?:type|text|value)_)\d+/g, "$1" + n));
        }
      }
      for (const label of row.querySelectorAll("label")) label.textContent = label.textContent.replace(/^Button \d+/, "Button " + n);
      const remove = row.querySelector("button[name='remove_button']");
      remove.value = n;
      remove.setAttribute("aria-label", "Remove button " + n);
    });
    const counts = { QUICK_REPLY: 0, cta: 0, COPY_CODE: 0 };
    for (const row of all) {
      const type = row.querySelector("select").value;
      row.dataset.type = type;
      counts[kindOf(type)] = (counts[kindOf(type)] || 0) + 1;
      const value = row.querySelector(".b-value label");
      value.textContent = "Button " + row.dataset.row + " " + (valueLabels[type] || "URL, phone number or example code");
    }
    for (const row of all) {
      const own = kindOf(row.dataset.type);
      for (const o of row.querySelectorAll("option[value]")) {
        if (!o.value) continue;
        const k = kindOf(o.value);
        o.disabled = k !== own && counts[k] >= limits[k];
      }
    }
    add.hidden = all.length >= maxButtons;
    add.textContent = all.length ? "Add another button" : "Add a button";
  };

  if (buttons && rows && add && pattern) {
    form.classList.add("js-buttons");
    add.addEventListener("click", (ev) => {
      ev.preventDefault();
      if (rows.querySelectorAll(".button-row").length >= maxButtons) return;
      const row = pattern.content.firstElementChild.cloneNode(true);
      rows.append(row);
      renumber();
      row.querySelector("select").focus();
    });
    rows.addEventListener("click", (ev) => {
      const remove = ev.target.closest("button[name='remove_button']");
      if (!remove) return;
      ev.preventDefault();
      remove.closest(".button-row").remove();
      renumber();
      add.focus();
      clearTimeout(timer);
      timer = setTimeout(check, 50);
    });
    rows.addEventListener("change", (ev) => {
      if (ev.target.matches("select")) renumber();
    });
    renumber();
  }

  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
  form.addEventListener("change", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 50);
  });
});
