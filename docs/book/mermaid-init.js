// Draws the book's Mermaid blocks (figures and shrunk traces) as diagrams when
// mermaid.min.js sits at the book's root: `.ci/run` copies it there from the
// pinned npm package of tests/parsers. Without it a block stays readable text,
// as it is in a terminal.
(function () {
  var blocks = document.querySelectorAll("code.language-mermaid");
  if (blocks.length === 0) return;
  var root = typeof path_to_root === "string" ? path_to_root : "";
  var script = document.createElement("script");
  script.src = root + "mermaid.min.js";
  script.onload = function () {
    blocks.forEach(function (code) {
      var div = document.createElement("div");
      div.className = "mermaid";
      div.textContent = code.textContent;
      code.parentElement.replaceWith(div);
    });
    window.mermaid.initialize({ startOnLoad: false });
    window.mermaid.run({ querySelector: "div.mermaid" });
  };
  document.head.appendChild(script);
})();
