// Step through a round's replay: one event at a time, previous / next (and arrow keys).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const list = document.getElementById("replay-steps");
  const counter = document.getElementById("replay-position");
  if (!list || !counter) return;
  const steps = Array.from(list.children);
  let current = 0;
  list.classList.remove("replay-all");
  const show = () => {
    steps.forEach((li, i) => li.classList.toggle("current", i === current));
    counter.textContent = `${current + 1} / ${steps.length}`;
  };
  const move = (delta) => {
    current = Math.min(steps.length - 1, Math.max(0, current + delta));
    show();
  };
  document.querySelectorAll("#replay-controls [data-step]").forEach((button) => {
    button.addEventListener("click", () => move(Number(button.dataset.step)));
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "ArrowLeft") move(-1);
    if (event.key === "ArrowRight") move(1);
  });
  show();
});
