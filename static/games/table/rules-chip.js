// The rules chip in the table's header (a <details>): its sheet closes on Escape, on a tap
// outside it, and when the table's phase moves on (the server renders its contents).

const chip = document.getElementById("rules-chip");
if (chip) {
  const close = () => {
    chip.open = false;
  };
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && chip.open) {
      close();
      chip.querySelector("summary").focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (chip.open && !chip.contains(event.target)) close();
  });
}
