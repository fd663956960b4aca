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
    if (m.mainline === true) {
      addRow(m);
    }
  });

  // addRow lists a commit of the branch's line at the top of a history
  // page that shows the newest commits.
  function addRow(m) {
    var table = document.querySelector("table.history[data-live-rows]");
    if (!table) {
      return;
    }
    var tr = document.createElement("tr");
    tr.className = "row live";
    tr.setAttribute("data-commit", m.commit);
    var cell = function (cls, text) {
      var td = document.createElement("td");
      if (cls) {
        td.className = cls;
      }
      td.textContent = String(text || "");
      tr.appendChild(td);
      return td;
    };
    cell("graph", "*");
    var td = cell("", "");
    var a = document.createElement("a");
    a.className = "commit";
    a.setAttribute("href", "/mutation/" + m.commit);
    a.textContent = m.commit.slice(0, 10);
    td.appendChild(a);
    cell("agent", m.agent);
    cell("when", m.time);
    cell("subject", m.subject);
    cell("mono", m.mutation_id);
    cell("mono", m.correlation_id);
    var first = table.querySelector("tr.row");
    if (first) {
      first.parentNode.insertBefore(tr, first);
    } else {
      table.appendChild(tr);
    }
  }
})();
