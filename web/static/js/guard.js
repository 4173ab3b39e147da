// The turn bar's guard against a double tap: when what the bar offers changes (a new main
// action, Confirm for a miss after "End turn…", the next question), its buttons wait a moment
// before they take a tap. The second tap of a double or triple tap then lands on nothing,
// instead of on an action that appeared under the finger and was never seen.

export const GUARD_MS = 450; // longer than a double tap (about 100-300 ms), shorter than reading a button

export class BarGuard {
  constructor(bar) {
    this.bar = bar;
    this.key = null;
    this.timer = null;
    this.waiting = false;
    // Capture: the tap is stopped before any button's own handler (or a label's file input) sees it.
    bar.addEventListener("click", (event) => {
      if (this.waiting && event.target.closest(".bar-actions")) {
        event.preventDefault();
        event.stopPropagation();
        this.hold(); // a finger still tapping: wait from this tap on
      }
    }, true);
  }

  // `parts`: what the bar offers now; a change makes its buttons wait GUARD_MS. A bar that
  // appears where none was (after a photo is read) had no button under a finger: no wait.
  changed(parts) {
    const key = JSON.stringify(parts);
    if (key === this.key) return;
    const wasShown = this.key !== null && this.key !== "[]";
    this.key = key;
    if (wasShown && parts.length) this.hold();
  }

  hold() {
    clearTimeout(this.timer);
    this.waiting = true;
    this.bar.classList.add("waiting");
    const buttons = this.bar.querySelectorAll(".bar-actions > *");
    buttons.forEach((b) => b.setAttribute("aria-disabled", "true"));
    this.timer = setTimeout(() => {
      this.waiting = false;
      this.bar.classList.remove("waiting");
      buttons.forEach((b) => b.removeAttribute("aria-disabled"));
    }, GUARD_MS);
  }
}
