// The review app's only script: it follows the branch's head over
// server-sent events and shows each new commit in the header. Everything
// it writes goes through textContent, never as HTML.
"use strict";
(function () {
  var live = document.getElementById("live");
  if (!live || typeof EventSource === "undefined") {
    return;
  }
  var branch = live.getAttribute("data-branch") || "";
  var head = document.getElementById("live-head");
  var subject = document.getElementById("live-subject");
  var note = document.getElementById("live-note");
  var since = 0;
  var es = new EventSource("/events?branch=" + encodeURIComponent(branch) +
    "&from=" + encodeURIComponent(head.getAttribute("data-commit") || ""));
  es.addEventListener("commit", function (ev) {
    var m;
    try {
      m = JSON.parse(ev.data);
    } catch (e) {
      return;
    }
    if (typeof m.commit !== "string" || !/^[0-9a-f]{40,64}$/.test(m.commit)) {
      return;
    }
    since++;
    head.textContent = m.commit.slice(0, 10);
    head.setAttribute("href", "/mutation/" + m.commit);
    head.setAttribute("data-commit", m.commit);
    subject.textContent = String(m.subject || "") + " — " + String(m.agent || "");
    note.textContent = since + (since === 1 ? " new commit" : " new commits") + " since this page was drawn; reload to see them";
    note.hidden = false;
    document.body.setAttribute("data-live-commits", String(since));
  });
})();
