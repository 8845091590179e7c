/* The drop zone of the upload form: dropped files go into the file input and
   their names are listed. A static file, as every script: the
   Content-Security-Policy allows no inline script. */
(function () {
  "use strict";
  function init() {
    var zone = document.getElementById("dropzone");
    if (!zone) { return; }
    var input = zone.querySelector("input[type=file]");
    var names = document.getElementById("dropzone-names");
    function show() {
      names.textContent = Array.prototype.map.call(input.files, function (f) { return f.name; }).join(", ");
    }
    input.addEventListener("change", show);
    ["dragenter", "dragover"].forEach(function (ev) {
      zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (ev) {
      zone.addEventListener(ev, function (e) { e.preventDefault(); zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (e) {
      if (e.dataTransfer && e.dataTransfer.files.length) { input.files = e.dataTransfer.files; show(); }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
