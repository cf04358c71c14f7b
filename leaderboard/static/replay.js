/* The audio-synchronised replay of a speech instance or long-form recording (leaderboard/replay.py writes its
   data). A clock (the <audio> element while it plays the recording, else a silent clock) drives two lanes of
   spans: at time t a span is shown when its time is <= t and struck through when a revision erased it at or
   before t. The timeline moves with it (its cursor, the instance page's slider) and a click on a word or on a
   dot of the timeline moves the clock there. No dependency, no network: the audio is a file of the site.
   window.harnessReplay.seek(ms) sets the clock from a script (the browser tests do). */
(function () {
  "use strict";

  var FRESH_MS = 1000; // a word shown for less than this is highlighted
  var CLASSES = ["rw", "rw", "rw erased", "rw fresh"]; // hidden, shown, erased, shown just now

  function buildLane(lane, joiner) {
    var box = document.querySelector('.lane-text[data-lane="' + lane.id + '"]');
    var n = lane.spans.length;
    var out = { box: box, els: [], show: new Float64Array(n), erase: new Float64Array(n), state: new Int8Array(n),
                last: -1 };
    lane.spans.forEach(function (s, i) {
      var el = document.createElement("span");
      el.className = "rw";
      el.hidden = true;
      el.textContent = s[0];
      el.setAttribute("data-t", String(s[1]));
      box.appendChild(el);
      if (joiner) { box.appendChild(document.createTextNode(joiner)); }
      out.els.push(el);
      out.show[i] = s[1];
      out.erase[i] = s[2] === null ? Infinity : s[2];
    });
    return out;
  }

  function renderLane(lane, t) {
    var last = -1;
    for (var i = 0; i < lane.els.length; i++) {
      var s = 0;
      if (lane.show[i] <= t) {
        s = lane.erase[i] <= t ? 2 : (t - lane.show[i] < FRESH_MS ? 3 : 1);
        last = i;
      }
      if (s !== lane.state[i]) {
        lane.els[i].hidden = s === 0;
        lane.els[i].className = CLASSES[s];
        lane.state[i] = s;
      }
    }
    if (last !== lane.last && last >= 0) { // keep the newest word in view, inside the lane (never the page)
      var el = lane.els[last];
      lane.box.scrollTop = Math.max(0, el.offsetTop + el.offsetHeight - lane.box.clientHeight + 8);
    }
    lane.last = last;
  }

  function windowCursors() {
    return Array.prototype.map.call(document.querySelectorAll("svg.window[data-t0]"), function (svg) {
      var line = document.createElementNS(svg.namespaceURI, "line");
      line.setAttribute("class", "replay-cursor");
      line.setAttribute("y1", svg.getAttribute("data-y0"));
      line.setAttribute("y2", svg.getAttribute("data-y1"));
      line.setAttribute("stroke", "#c81e1e");
      line.setAttribute("stroke-width", "2");
      line.style.display = "none";
      svg.appendChild(line);
      return { line: line, t0: parseFloat(svg.getAttribute("data-t0")), t1: parseFloat(svg.getAttribute("data-t1")),
               x0: parseFloat(svg.getAttribute("data-x0")), x1: parseFloat(svg.getAttribute("data-x1")) };
    });
  }

  function Replay(d) {
    var self = this;
    this.d = d;
    this.t = 0;
    this.playing = false;
    this.silentStart = null;
    this.silentFrom = 0;
    this.raf = 0;
    this.linked = false; // the instance page's slider follows the replay once the replay is used
    this.pushing = false;
    this.pushed = null;
    this.ownSeek = null; // the media time of the last seek the replay made itself
    this.audio = document.getElementById("replay-audio");
    this.audioEnd = this.audio ? d.lengthMs : 0;
    this.button = document.getElementById("replay-play");
    this.clock = document.getElementById("replay-clock");
    this.out = document.getElementById("replay-time");
    this.sentence = document.getElementById("replay-sentence");
    this.moment = document.getElementById("moment");
    this.lanes = d.lanes.map(function (lane) { return buildLane(lane, d.joiner); });
    this.cursors = windowCursors();
    this.button.addEventListener("click", function () { if (self.playing) { self.pause(); } else { self.play(); } });
    this.clock.addEventListener("input", function () { self.seek(parseFloat(self.clock.value)); });
    this.bindAudio();
    this.bindClicks();
    this.render();
  }

  Replay.prototype.bindAudio = function () {
    var self = this, audio = this.audio;
    if (!audio) { return; }
    audio.addEventListener("loadedmetadata", function () {
      if (isFinite(audio.duration) && audio.duration > 0) { self.audioEnd = audio.duration * 1000; }
    });
    audio.addEventListener("seeked", function () { // also a seek made on the element itself
      if (self.audioOn() || !self.playing) {
        // the element keeps whole microseconds: a seek of ours keeps its exact time, any other is taken as it is
        if (self.ownSeek === null || Math.abs(audio.currentTime - self.ownSeek) > 2e-6) {
          self.t = audio.currentTime * 1000;
        }
        self.ownSeek = null;
        self.linked = true; // the player was used: the page's slider follows it from now on
        self.render();
      }
    });
    audio.addEventListener("ended", function () {
      if (self.playing) { self.t = Math.max(self.t, self.audioEnd); self.runSilent(); }
    });
    audio.addEventListener("error", function () { // unreadable: the replay runs silent
      self.audio = null;
      self.audioEnd = 0;
      if (self.playing) { self.runSilent(); }
    });
  };

  Replay.prototype.bindClicks = function () {
    var self = this;
    document.addEventListener("click", function (ev) {
      var target = ev.target && ev.target.closest ? ev.target.closest(".lane-text .rw, svg.timeline circle[data-t]")
        : null;
      if (target) { self.seek(parseFloat(target.getAttribute("data-t"))); }
    });
    var erased = document.getElementById("replay-erased");
    if (erased) {
      erased.addEventListener("change", function () {
        document.getElementById("replay-lanes").classList.toggle("hide-erased", !erased.checked);
      });
    }
    if (this.moment) {
      this.moment.addEventListener("input", function () {
        if (!self.pushing) { self.seek(parseFloat(self.moment.value)); }
      });
    }
  };

  Replay.prototype.audioOn = function () {
    return !!this.audio && !this.audio.paused && !this.audio.ended;
  };

  Replay.prototype.current = function () {
    if (this.audioOn()) { return this.audio.currentTime * 1000; }
    if (this.playing && this.silentStart !== null) {
      return Math.min(this.d.endMs, this.silentFrom + performance.now() - this.silentStart);
    }
    return this.t;
  };

  Replay.prototype.runSilent = function () {
    this.silentFrom = this.t;
    this.silentStart = performance.now();
  };

  Replay.prototype.tick = function () {
    var self = this;
    this.raf = 0;
    if (!this.playing) { return; }
    this.t = this.current();
    this.render();
    if (this.t >= this.d.endMs) { this.pause(); return; }
    this.raf = requestAnimationFrame(function () { self.tick(); });
  };

  Replay.prototype.play = function () {
    var self = this;
    if (this.t >= this.d.endMs) { this.t = 0; }
    this.playing = true;
    this.linked = true;
    this.button.textContent = "Pause";
    if (this.audio && this.t < this.audioEnd) {
      this.silentStart = null;
      if (Math.abs(this.audio.currentTime * 1000 - this.t) > 1) { this.audio.currentTime = this.t / 1000; }
      var started = this.audio.play();
      if (started && started.catch) {
        started.catch(function () { if (self.playing && !self.audioOn()) { self.runSilent(); } });
      }
    } else {
      this.runSilent();
    }
    if (!this.raf) { this.raf = requestAnimationFrame(function () { self.tick(); }); }
  };

  Replay.prototype.pause = function () {
    this.t = this.current();
    this.playing = false;
    this.silentStart = null;
    if (this.audio && !this.audio.paused) { this.audio.pause(); }
    this.button.textContent = "Play";
    this.render();
  };

  Replay.prototype.seek = function (ms) {
    if (isNaN(ms)) { return; }
    this.t = Math.max(0, Math.min(ms, this.d.endMs));
    this.linked = true;
    if (this.audio && this.t < this.audioEnd) {
      this.audio.currentTime = this.t / 1000;
      this.ownSeek = this.t / 1000;
      if (this.playing) {
        this.silentStart = null;
        if (this.audio.paused || this.audio.ended) { this.audio.play(); }
      }
    } else {
      if (this.audio && !this.audio.paused) { this.audio.pause(); }
      if (this.playing) { this.runSilent(); }
    }
    this.render();
  };

  Replay.prototype.render = function () {
    var t = this.t, d = this.d;
    this.lanes.forEach(function (lane) { renderLane(lane, t); });
    this.clock.value = String(Math.round(t));
    this.out.textContent = (t / 1000).toFixed(2) + " s of " + (d.endMs / 1000).toFixed(2) + " s"
      + (t > d.lengthMs ? " (after the audio's end)" : "");
    this.cursors.forEach(function (c) {
      var inside = t >= c.t0 && t <= c.t1;
      c.line.style.display = inside ? "" : "none";
      if (inside) {
        var x = c.x0 + (c.x1 - c.x0) * (t - c.t0) / Math.max(c.t1 - c.t0, 1);
        c.line.setAttribute("x1", x);
        c.line.setAttribute("x2", x);
      }
    });
    this.showSentence(t);
    if (this.linked && this.moment && this.pushed !== t) {
      this.pushed = t;
      this.pushing = true;
      this.moment.value = String(t);
      this.moment.dispatchEvent(new Event("input"));
      this.pushing = false;
    }
  };

  Replay.prototype.showSentence = function (t) {
    if (!this.sentence) { return; }
    var text = "(between reference sentences)";
    for (var i = 0; i < this.d.sentences.length; i++) {
      var s = this.d.sentences[i];
      if (s[0] <= t && t < s[1]) {
        text = "Spoken now: s" + s[2] + " (" + (s[0] / 1000).toFixed(1) + "–" + (s[1] / 1000).toFixed(1)
          + " s); its reference: " + s[3];
        break;
      }
    }
    this.sentence.textContent = text;
  };

  document.addEventListener("DOMContentLoaded", function () {
    var dataEl = document.getElementById("replay-data");
    if (!dataEl) { return; }
    var replay = new Replay(JSON.parse(dataEl.textContent));
    window.harnessReplay = {
      seek: function (ms) { replay.seek(ms); },
      play: function () { replay.play(); },
      pause: function () { replay.pause(); },
      time: function () { return replay.t; },
      playing: function () { return replay.playing; }
    };
  });
}());
