// The die picker: a value the dice show or W, and a colour. Resolves to {token}, {remove: true} or null.

import { WILD, colourLetter, makeToken, parseToken } from "./dice.js";

const dialog = () => document.getElementById("picker");
let built = false;

// `info` is /api/info: the values and colours on offer are the dice set's.
function build(info) {
  const d = dialog();
  d.querySelector(".values").innerHTML = [...info.face_values.map(String), WILD].map(
    (v) => `<button type="button" class="pick-value" data-value="${v}" aria-pressed="false">${v}</button>`
  ).join("");
  d.querySelector(".colours").innerHTML = info.colors.map(
    (c) => `<button type="button" class="pick-colour c-${c}" data-colour="${c}" aria-pressed="false"
      aria-label="${c}"><span>${colourLetter(c)}</span> ${c}</button>`
  ).join("");
  built = true;
}

export function pickDie(info, { token = null, title = "Correct the die", canRemove = true } = {}) {
  if (!built) build(info);
  const d = dialog();
  const current = (token && parseToken(token)) || { value: null, colour: null };
  let value = current.value;
  let colour = current.colour;
  d.querySelector("#picker-title").textContent = title;
  d.querySelector('[data-act="remove"]').hidden = !canRemove;
  d.querySelector('[data-act="ok"]').textContent = token ? "Done" : "Add die";

  const sync = () => {
    d.querySelectorAll(".pick-value").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.value === value)));
    d.querySelectorAll(".pick-colour").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.colour === colour)));
    d.querySelector('[data-act="ok"]').disabled = !(value && colour);
  };
  sync();

  return new Promise((resolve) => {
    const finish = (result) => {
      d.removeEventListener("click", onClick);
      d.removeEventListener("cancel", onCancel);
      if (d.open) d.close();
      resolve(result);
    };
    const onCancel = (event) => { event.preventDefault(); finish(null); };
    const onClick = (event) => {
      const button = event.target.closest("button");
      if (!button) {
        if (event.target === d) finish(null); // a tap on the backdrop
        return;
      }
      if (button.dataset.value) { value = button.dataset.value; sync(); }
      else if (button.dataset.colour) { colour = button.dataset.colour; sync(); }
      else if (button.dataset.act === "ok" && value && colour) finish({ token: makeToken(value, colour) });
      else if (button.dataset.act === "remove") finish({ remove: true });
      else if (button.dataset.act === "cancel") finish(null);
    };
    d.addEventListener("click", onClick);
    d.addEventListener("cancel", onCancel);
    d.showModal();
  });
}
