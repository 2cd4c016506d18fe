// turinglab: the scripts' messages in the study's language. The server puts the catalogue in the
// page (<script type="application/json" id="i18n">, no catalogue: English); t("English text",
// {name: value}) gives the translation with {name} filled in.
"use strict";
window.turinglabT = (function () {
  const e = document.getElementById("i18n");
  let cat = {};
  try { cat = e ? JSON.parse(e.textContent) : {}; } catch (err) { cat = {}; }
  return function t(key, vals) {
    const s = Object.prototype.hasOwnProperty.call(cat, key) ? cat[key] : key;
    return vals ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vals ? String(vals[k]) : m)) : s;
  };
})();
