// The roll advisor on the turn screen: which roll of the turn the dice show (each new photo
// of a turn moves it on; the player can still change it), and after roll 1 or 2 the server's advisor (POST /api/advise) says which dice to keep and the
// odds. The page only shows the answer: it decides nothing itself. It asks only about dice
// the set can show at once, as the server's evaluation of them says (a half-made correction
// is not a roll).
//
// "Show roll advice" is a per-device preference (some players want to play unaided), kept in
// localStorage, not a house rule of the game.

import { api } from "./api.js";
import { chipHtml } from "./dice.js";
import { esc } from "./dom.js";

const SETTING_KEY = "p10.showAdvice";
const PLANS = {
  best: { label: "Best chance", hint: "most likely to make the phase" },
  best_score: { label: "Best score", hint: "highest expected score" },
};

export function adviceWanted() {
  try {
    return localStorage.getItem(SETTING_KEY) !== "off";
  } catch (err) {
    return true; // storage blocked (private mode): advice stays on, as by default
  }
}

function rememberAdviceWanted(on) {
  try {
    localStorage.setItem(SETTING_KEY, on ? "on" : "off");
  } catch (err) {
    // not remembered on this device; the switch still works for this page
  }
}

export class RollAdvisor {
  // `info` is /api/info: the rolls in a turn and the dice the advisor needs are the game's.
  constructor(info) {
    this.finalRoll = info.rolls_per_turn;
    this.allDice = info.dice_count;
    this.enabled = adviceWanted();
    this.roll = 1;
    this.seq = undefined; // the game's seq: a new one means a new turn, so roll 1 again
    this.state = null;
    this.tokens = [];
    this.possible = null; // {possible, reason} for these tokens, from the server; null: not yet known
    this.key = null; // what the current answer is for
    this.answer = null; // {advice} | {error} | {pending}
    this.plan = "best";
    this.serial = 0;
  }

  // `bar` gets the roll selector and the setting, `box` the advice, `dice` holds the chips;
  // `onRoll` is told when the roll changes (the turn screen's main action depends on it).
  mount(bar, box, dice, onRoll = () => {}) {
    this.bar = bar;
    this.box = box;
    this.dice = dice;
    this.onRoll = onRoll;
    bar.innerHTML = barHtml(this.finalRoll);
    bar.querySelector("#advice-on").checked = this.enabled;
    bar.addEventListener("change", (event) => {
      if (event.target.id === "advice-on") {
        this.enabled = event.target.checked;
        rememberAdviceWanted(this.enabled);
      } else if (event.target.name === "roll") {
        this.roll = Number(event.target.value);
        this.onRoll();
      }
      this.refresh();
    });
    box.addEventListener("click", (event) => {
      const button = event.target.closest("[data-plan]");
      if (!button) return;
      this.plan = button.dataset.plan;
      this.refresh();
    });
  }

  // Called by the turn screen after every redraw of the dice (new photo, a correction, a
  // new state from the server).
  // `possible`: the server's word on whether these dice can be showing at once (null: not yet).
  update(state, tokens, possible = null) {
    if (state && state.seq !== this.seq) {
      this.seq = state.seq;
      this.roll = 1; // a new turn starts on roll 1 (after a confirm here or on another device)
      this.onRoll();
    }
    this.state = state;
    this.tokens = tokens;
    this.possible = possible;
    this.refresh();
  }

  // The turn `seq` as kept on the server, at roll `roll` (a reload goes on where it was).
  resume(seq, roll) {
    this.seq = seq;
    this.roll = Math.min(Math.max(1, roll), this.finalRoll);
  }

  // A further photo in the same turn shows the next roll.
  nextRoll() {
    if (this.roll < this.finalRoll) this.roll += 1;
    this.onRoll(); // the chips and the advice follow when the turn screen draws the new dice
  }

  refresh() {
    if (!this.bar) return;
    const s = this.state;
    const playing = !!s && !s.over;
    // The roll is the turn's, not only the advice's: it decides the main action, so it shows
    // with the advice off too.
    this.bar.querySelector(".roll-picker").hidden = !playing;
    this.bar.querySelectorAll("input[name=roll]").forEach((input) => {
      input.checked = Number(input.value) === this.roll;
    });
    this.markChips(null);
    if (!this.enabled || !playing || this.roll === this.finalRoll || !this.tokens.length) {
      this.show("");
      return;
    }
    if (this.tokens.length < this.allDice) {
      this.show(`<p class="muted" id="advice-note">Roll advice needs all ${this.allDice} dice (${this.tokens.length} showing).</p>`);
      return;
    }
    if (!this.possible) {
      this.show(`<p class="muted">Working out the odds…</p>`);
      return;
    }
    if (!this.possible.possible) {
      this.show(`<p class="error">No advice for these dice: ${esc(this.possible.reason)}</p>`);
      return;
    }
    const key = JSON.stringify([s.phase, s.rules, this.tokens, this.roll]);
    if (key !== this.key) this.ask(key);
    this.draw();
  }

  async ask(key) {
    this.key = key;
    this.answer = { pending: true };
    this.plan = "best";
    const serial = ++this.serial;
    const { phase, rules } = this.state;
    let answer;
    try {
      answer = { advice: await api.advise(phase, this.tokens, this.finalRoll - this.roll, rules) };
    } catch (err) {
      answer = { error: err.message };
    }
    if (serial !== this.serial) return; // the dice changed meanwhile: a newer question is out
    this.answer = answer;
    this.refresh();
  }

  draw() {
    const a = this.answer;
    if (!a || a.pending) {
      this.show(`<p class="muted">Working out the odds…</p>`);
      return;
    }
    if (a.error) {
      this.show(`<p class="error">No advice for these dice: ${esc(a.error)}</p>`);
      return;
    }
    const advice = a.advice;
    const differ = !sameKeep(advice.best.keep, advice.best_score.keep);
    if (!differ) this.plan = "best";
    const plan = advice[this.plan];
    this.markChips(plan.keep);
    const left = this.finalRoll - this.roll;
    const toggle = differ
      ? `<div class="plan-toggle" role="group" aria-label="Which plan">${Object.entries(PLANS).map(([name, p]) =>
        `<button type="button" class="btn small${name === this.plan ? " on" : ""}" data-plan="${name}" aria-pressed="${name === this.plan}" title="${esc(p.hint)}">${p.label}</button>`).join("")}</div>`
      : "";
    const stop = advice.keep_all;
    this.show(`
      <p class="advice-head"><strong>Roll advice</strong> · after roll ${this.roll}, ${left} ${left === 1 ? "roll" : "rolls"} left</p>
      ${toggle}
      <p class="advice-keep" id="advice-keep">${keepText(plan.keep, this.tokens)}</p>
      <p class="advice-odds" id="advice-odds"><strong>${percent(plan.p_complete)}</strong> chance to make Phase ${this.state.phase}
        · expected score <strong>${score(plan)}</strong>${differ ? "" : ` <span class="muted">(best chance and best score agree)</span>`}</p>
      <p class="muted advice-stop" id="advice-stop">Keeping all the dice now: ${percent(stop.p_complete)} · ${score(stop)} points</p>`);
  }

  show(html) {
    this.box.hidden = !html;
    this.box.innerHTML = html;
  }

  // Ring the chips to keep and dim the others; null clears the marks.
  markChips(keep) {
    const kept = new Set(keep || []);
    this.dice.querySelectorAll(".chip[data-index]").forEach((chip) => {
      const index = Number(chip.dataset.index);
      chip.classList.toggle("keep", keep !== null && kept.has(index));
      chip.classList.toggle("reroll", keep !== null && !kept.has(index));
      const badge = chip.querySelector(".k");
      if (keep !== null && kept.has(index)) {
        if (!badge) chip.insertAdjacentHTML("beforeend", '<span class="k" aria-hidden="true">KEEP</span>');
      } else if (badge) badge.remove();
    });
  }
}

function barHtml(finalRoll) {
  const rolls = Array.from({ length: finalRoll }, (_, i) => i + 1).map((n) => `
    <label class="roll-option"><input type="radio" name="roll" value="${n}"${n === 1 ? " checked" : ""}>
    <span>Roll ${n}${n === finalRoll ? " (final)" : ""}</span></label>`).join("");
  return `
    <div class="roll-picker" role="radiogroup" aria-label="Which roll of the turn the dice show">${rolls}</div>
    <label class="advice-setting"><input type="checkbox" id="advice-on"> Show roll advice</label>`;
}

function sameKeep(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function keepText(keep, tokens) {
  if (keep.length === tokens.length) return "Keep all the dice: stop here.";
  if (!keep.length) return `Reroll all ${tokens.length} dice.`;
  const chips = keep.map((i) => chipHtml(tokens[i], { small: true })).join("");
  const rest = tokens.length - keep.length;
  return `Keep ${chips} and reroll the other ${rest} ${rest === 1 ? "die" : "dice"}.`;
}

// Odds as the player reads them: never "100%" for what can still fail, nor "0%" for a chance.
// (Within 1e-9 of certain is certain: that much is float rounding of the sums.)
function percent(p) {
  if (p >= 1 - 1e-9) return "100%";
  if (p <= 1e-9) return "0%";
  if (p > 0.999) return ">99.9%";
  if (p < 0.001) return "<0.1%";
  return `${(p * 100).toFixed(1)}%`;
}

function score(option) {
  const low = option.expected_score.toFixed(1);
  // Phase 8 with two rolls left can give a bound rather than the exact figure.
  if (option.expected_score_upper !== undefined && option.expected_score_upper.toFixed(1) !== low) {
    return `${low}–${option.expected_score_upper.toFixed(1)}`;
  }
  return low;
}
