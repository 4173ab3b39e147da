// The scorepad, laid out like the printed one. It only shows what the server's game says.

import { esc } from "./dom.js";

// `info` is /api/info: the last phase is the game's.
export function announcementHtml(state, info) {
  const pad = state.scorepad;
  if (state.over) {
    const best = Math.max(...pad.players.map((p) => p.total));
    const who = state.winners.map(esc).join(" and ");
    const text = state.winners.length > 1 ? `Tie: ${who} share the win with ${best}` : `${who} wins with ${best}`;
    return `<div class="banner over" role="status"><strong>Game over.</strong> ${text}.</div>`;
  }
  if (state.in_last_chances) {
    const first = state.attempts.find((a) => a.first_finish_bonus > 0);
    const finisher = first ? `${esc(first.player)} made Phase ${info.phases.length} first. ` : "";
    return `<div class="banner last" role="status"><strong>Normal play has ended.</strong> ${finisher}Last chance for everyone else: ${esc(state.next)} now.</div>`;
  }
  return "";
}

// `info` is /api/info: a player past its last phase has made them all, and the Five Phase
// Bonus row follows the phase that earns it.
export function scorepadHtml(state, info) {
  const pad = state.scorepad;
  const phaseCount = info.phases.length;
  const players = pad.players;
  const head = players.map((p) => {
    const current = p.name === state.next ? " current" : "";
    const status = p.phase > phaseCount ? "done" : `Phase ${p.phase}`;
    const won = state.winners.includes(p.name) ? ` <span class="crown" aria-label="winner">★</span>` : "";
    return `<th scope="col" class="player${current}"${current ? ' aria-current="true"' : ""} title="${esc(p.name)}"><span class="pname" aria-label="${esc(p.name)}">${esc(padName(p.name))}</span>${won}<small>${status}</small></th>`;
  }).join("");
  const phaseRow = (n) => `<tr><th scope="row">Phase ${n}</th>${players.map((p) => {
    const score = p.phases[n - 1];
    const here = p.phase === n ? " here" : "";
    const current = p.name === state.next ? " current" : "";
    return `<td class="${here}${current}">${score === null ? "" : score}</td>`;
  }).join("")}</tr>`;
  const row = (label, cls, value) => `<tr class="${cls}"><th scope="row">${label}</th>${players.map((p) => {
    const current = p.name === state.next ? " current" : "";
    return `<td class="${current}">${value(p)}</td>`;
  }).join("")}</tr>`;
  const bonus = (v) => (v ? `+${v}` : "");
  const rows = [];
  for (const { number } of info.phases) {
    rows.push(phaseRow(number));
    if (number === info.five_phase_bonus_phase) rows.push(row("Five Phase Bonus", "bonus", (p) => bonus(p.five_phase_bonus)));
  }
  rows.push(row("First Finish Bonus", "bonus", (p) => bonus(p.first_finish_bonus)));
  if (state.mode === "solitaire") {
    rows.push(row("Failures", "extra", (p) => p.failures));
    rows.push(row("Penalty", "extra", (p) => (p.penalty ? p.penalty : "0")));
  }
  rows.push(row("Total", "total", (p) => p.total));
  return `<table class="scorepad" aria-label="Scorepad">
    <thead><tr><th scope="col"><span class="sr">Row</span></th>${head}</tr></thead>
    <tbody>${rows.join("")}</tbody>
  </table>`;
}

// The longest word a column shows whole; a longer one is cut with "…" (the column's title
// has the whole name), so a name breaks between its words, never inside one.
const PAD_WORD = 8;

export function padName(name) {
  const cut = (part) => (part.length > PAD_WORD ? `${part.slice(0, PAD_WORD - 1)}…` : part);
  // "Maximilian-Alexander": each part between hyphens on its own, the hyphen kept (a line may break after it)
  return name.split(/\s+/).map((word) => word.split("-").map(cut).join("-")).join(" ");
}

export function historyHtml(state) {
  if (!state.attempts.length) return `<p class="muted">No attempts yet.</p>`;
  const last = state.attempts.slice(-6).reverse();
  return `<ol class="history" reversed start="${state.attempts.length}">${last.map((a) => `
    <li><strong>${esc(a.player)}</strong> · Phase ${a.phase}: ${a.made ? `made, ${a.score}` : "missed"}${
      a.five_phase_bonus ? ` · Five Phase Bonus +${a.five_phase_bonus}` : ""}${a.first_finish_bonus ? ` · First Finish Bonus +${a.first_finish_bonus}` : ""}${
      a.penalty ? ` · penalty ${a.penalty}` : ""}${a.last_chance ? " · last chance" : ""}
      <span class="muted">${a.dice.map(esc).join(" ")}</span></li>`).join("")}</ol>`;
}

// Many players scroll sideways on a phone: say so, and shade the side that has more.
// `wrap` scrolls, `box` around it carries the shades, `hint` the words.
export function markPadScroll(wrap, box, hint, players) {
  const more = wrap.scrollWidth > wrap.clientWidth + 1;
  hint.hidden = !more;
  hint.textContent = `Swipe the scorepad sideways to see all ${players} players.`;
  box.classList.toggle("more-right", more && wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1);
  box.classList.toggle("more-left", more && wrap.scrollLeft > 1);
}
