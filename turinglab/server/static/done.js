// turinglab: a done page that offers withdrawal counts down before it sends the participant on to
// the study site (withdrawal.redirect_after_s); "Stay on this page" stops it. Without scripts the
// page never moves: the participant follows the link.
"use strict";
(function () {
  const box = document.getElementById("done-countdown");
  if (!box || !box.dataset.href) return;
  let left = parseInt(box.dataset.seconds, 10);
  const shown = document.getElementById("done-seconds");
  box.hidden = false;
  const timer = setInterval(function () {
    left -= 1;
    shown.textContent = String(Math.max(left, 0));
    if (left <= 0) { clearInterval(timer); location.href = box.dataset.href; }
  }, 1000);
  function stay() {
    clearInterval(timer);
    box.hidden = true;
    document.getElementById("done-stayed").hidden = false;
  }
  document.getElementById("done-stay").addEventListener("click", stay);
  const form = document.querySelector(".withdraw-form");  // asking to withdraw: no redirect meanwhile
  if (form) form.addEventListener("submit", function () { clearInterval(timer); });
})();
