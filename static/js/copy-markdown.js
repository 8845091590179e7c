// "Copy as Markdown" (templates/triage/_copy_markdown.html): fetch the
// snapshot's report.md with the page's session and put it on the clipboard.
// "Copy" buttons with data-copy-text (templates/triage/_not_checked.html) put
// that text (a command to run) on the clipboard.
// navigator.clipboard exists only in secure contexts (HTTPS, localhost); on a
// plain-HTTP intranet host the hidden-textarea copy is the one that works.
(function () {
  "use strict";

  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {
      ok = false;
    }
    document.body.removeChild(area);
    return ok;
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).then(
        function () { return true; },
        function () { return legacyCopy(text); }
      );
    }
    return Promise.resolve(legacyCopy(text));
  }

  function onClick(event) {
    // data-copy-url: another export of the same report ("Copy as Jira markup")
    var button = event.target.closest("[data-copy-markdown], [data-copy-url]");
    if (!button) return;
    var status = button.parentNode.querySelector(".copy-markdown-status");
    var url = button.getAttribute("data-copy-markdown") || button.getAttribute("data-copy-url");
    button.disabled = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/markdown" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(copy)
      .then(function (ok) {
        if (!ok) throw new Error("copy refused");
        if (status) status.textContent = button.getAttribute("data-copied");
        button.setAttribute("data-copied-ok", "1");
      })
      .catch(function () {
        if (status) status.textContent = button.getAttribute("data-failed");
        window.open(url, "_blank", "noopener");
      })
      .finally(function () {
        button.disabled = false;
      });
  }

  function onCopyText(event) {
    var button = event.target.closest("[data-copy-text]");
    if (!button) return;
    var status = button.parentNode.querySelector(".copy-status");
    copy(button.getAttribute("data-copy-text")).then(function (ok) {
      if (status) status.textContent = button.getAttribute(ok ? "data-copied" : "data-failed");
      if (ok) button.setAttribute("data-copied-ok", "1");
    });
  }

  if (!window.__casebookCopyMarkdown) {
    document.addEventListener("click", onCopyText);
    window.__casebookCopyMarkdown = true;
    document.addEventListener("click", onClick);
  }
})();
