// surveykit web collection: draws each respondent's private rules in the browser.
//
// For each question the page draws one rule from the design's protocol, shows it
// beside the question and takes the answer; the rule leaves the page with the
// answer. Back returns to the question before with the rule drawn for it: each
// question's rule is drawn once and kept in this page's memory (never stored,
// never sent), so going back cannot draw another. After the last question the
// page lists the answers for review (the answers only, never the rules). Only
// the answers leave the browser, all at once, when the respondent presses
// Submit: one POST of {"respondent_id", "answers"}.
//
// The draw is exact on a 2^53 grid: U = 21 random bits * 2^32 + 32 random bits,
// both from crypto.getRandomValues (never Math.random), is uniform on [0, 2^53)
// and exact in a JavaScript number; the rule drawn is the first whose integer
// threshold "below" exceeds U. The thresholds come from /survey.json, computed
// exactly by the server from the design's probabilities (surveykit.collection.webform).
//
// Numeric questions (an income, a number of days): the page draws the design's step
// with the same thresholds, then the scrambling numbers that step needs: a card of a
// deck or a total of dice by the deck's own integer thresholds (exact, as above), or a
// continuous draw by inversion from a uniform on (0, 1) made of 52 random bits,
// (V + 1/2) / 2^52, rounded to the decimals /survey.json gives. The respondent is
// shown what to do with them ("Multiply your true answer by 1.37 and type the
// result."), types the number, and only that number leaves the browser.
//
// This file is the same for every survey: its SHA-256 is printed by
// `surveykit serve --print-hash` and in the page footer.
"use strict";

(() => {
  const TWO_POW_32 = 4294967296;
  const TWO_POW_52 = 4503599627370496;
  // what a typed number must look like (the server checks the same)
  const NUMBER = /^-?[0-9]{1,15}(\.[0-9]{1,15})?$/;
  const GRID_BITS = 53;
  const state = {
    form: null, token: "", respondentId: null, group: 0, index: 0, answers: null, drawn: null,
  };
  const byId = (id) => document.getElementById(id);

  function uniform53() {
    const words = new Uint32Array(2);
    crypto.getRandomValues(words);
    return (words[0] >>> 11) * TWO_POW_32 + words[1];
  }

  function drawRule(rules) {
    if (rules.length === 1) {
      return rules[0]; // nothing to draw (e.g. a crosswise question without "don't know")
    }
    const u = uniform53();
    for (const rule of rules) {
      if (u < rule.below) {
        return rule;
      }
    }
    throw new Error("the rules' thresholds must end at 2^53");
  }

  function pick(below) {
    // the first index whose threshold exceeds U (a deck's cards, in order)
    const u = uniform53();
    let low = 0;
    let high = below.length - 1;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (u < below[middle]) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    return low;
  }

  function uniformOpen() {
    // (V + 1/2) / 2^52 with V uniform on [0, 2^52): exact, never 0 or 1, symmetric about 1/2
    return (Math.floor(uniform53() / 2) + 0.5) / TWO_POW_52;
  }

  function drawNumber(scrambler) {
    // one draw of a scrambling variable, not rounded (see decimalText)
    const p = scrambler.parameters;
    switch (scrambler.kind) {
      case "deck":
        return scrambler.values[pick(scrambler.below)];
      case "uniform":
        return p.low + (p.high - p.low) * uniformOpen();
      case "normal": {
        const radius = Math.sqrt(-2 * Math.log(uniformOpen()));
        return p.mu + p.sigma * radius * Math.cos(2 * Math.PI * uniformOpen()); // Box-Muller
      }
      case "exponential":
        return -p.mu * Math.log(uniformOpen());
      case "laplace": {
        const u = uniformOpen() - 0.5;
        return p.mu - p.scale * Math.sign(u) * Math.log(1 - 2 * Math.abs(u));
      }
      default:
        throw new Error("the page cannot draw a scrambler of kind " + scrambler.kind);
    }
  }

  function decimalText(value, decimals) {
    // rounded to `decimals` decimals, without trailing zeros (as the server stores numbers)
    let text = value.toFixed(decimals);
    if (text.includes(".")) {
      text = text.replace(/0+$/, "").replace(/\.$/, "");
    }
    return text === "-0" ? "0" : text;
  }

  function format(template, values) {
    // Python's str.format for {name}, {{ and }} (the wording's placeholders)
    return template.replace(/\{\{|\}\}|\{(\w+)\}/g, (match, name) => (name ? values[name] : match[0]));
  }

  function numberRule(question, rule) {
    // the step's draws turned into the two numbers shown: the answer is
    // W (c y + k U) + V = factor y + offset, factor = W c, offset = W k U + V
    const scramblers = question.number_answer.scramblers;
    const rounded = (name) => Number(decimalText(drawNumber(scramblers[name]),
                                                 scramblers[name].decimals));
    const w = rule.multiplier ? rounded(rule.multiplier) : 1;
    const u = rule.inner ? rounded(rule.inner) : 0;
    // V is rounded once, with the offset it makes up
    const v = rule.offset && scramblers[rule.offset].kind !== "unknown"
      ? drawNumber(scramblers[rule.offset]) : 0;
    const offset = decimalText(w * rule.inner_coefficient * u + v, rule.offset_decimals);
    const values = { factor: decimalText(w * rule.coefficient, rule.factor_decimals),
                     offset, value: offset };
    return { lines: rule.lines.map((line) => format(line, values)) };
  }

  function say(text, kind) {
    const message = byId("message");
    message.textContent = text;
    message.className = kind || "";
  }

  function show(section) {
    for (const id of ["start", "question", "review"]) {
      byId(id).hidden = id !== section;
    }
  }

  async function send(path, body) {
    const response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": state.token },
      body: JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = null;
    }
    return { status: response.status, data: data || {} };
  }

  async function post(path, body) {
    const reply = await send(path, body);
    if (reply.status !== 403 || reply.data.reason !== "csrf") {
      return reply;
    }
    // The server signs tokens with a secret that lives as long as its process: after a
    // restart it refuses this page's token. Take a fresh one and send once more.
    const response = await fetch("/token", { credentials: "same-origin", cache: "no-store" });
    state.token = (await response.json()).token;
    return send(path, body);
  }

  function paragraph(text) {
    const p = document.createElement("p");
    p.textContent = text;
    return p;
  }

  function ruleFor(index) {
    // drawn once per question: Back shows the same rule (and numbers) again, never a new draw
    if (!state.drawn[index]) {
      const question = state.form.questions[index];
      const groups = question.rules;
      const rule = drawRule(groups.length === 1 ? groups[0] : groups[state.group]);
      state.drawn[index] = question.type === "number" ? numberRule(question, rule) : rule;
    }
    return state.drawn[index];
  }

  function askNumber(question, chosen) {
    const spec = question.number_answer;
    const form = byId("number-form");
    form.hidden = !spec;
    if (!spec) {
      return;
    }
    const label = state.form.wording.web_number_label;
    byId("number-label").textContent = spec.unit ? `${label} (${spec.unit})` : label;
    const input = byId("number-input");
    input.step = spec.step;
    // the number typed before, when the respondent came back to this question
    input.value = chosen !== undefined && chosen !== "dont_know" ? chosen : "";
    byId("number-problem").textContent = "";
  }

  function numberProblem(input, spec) {
    const wording = state.form.wording;
    const typed = input.value.trim();
    if (input.validity.badInput || !NUMBER.test(typed)) {
      return wording.web_number_invalid;
    }
    const decimals = typed.includes(".") ? typed.split(".")[1].replace(/0+$/, "").length : 0;
    if (spec.decimals !== null && decimals > spec.decimals) {
      return spec.decimals === 0 ? wording.web_number_whole
        : format(wording.web_number_decimals, { step: spec.step });
    }
    const value = Number(typed);
    if ((spec.low !== null && value < spec.low) || (spec.high !== null && value > spec.high)) {
      return spec.range_problem;
    }
    return "";
  }

  function enterNumber(event) {
    event.preventDefault();
    const question = state.form.questions[state.index];
    const input = byId("number-input");
    const problem = numberProblem(input, question.number_answer);
    if (problem) {
      byId("number-problem").textContent = problem;
      input.focus();
      return;
    }
    answer(question.id, input.value.trim());
  }

  function ask() {
    const question = state.form.questions[state.index];
    const rule = ruleFor(state.index);
    const chosen = state.answers[question.id];
    byId("progress").textContent = question.progress;
    byId("question-text").textContent = question.text;
    const innocuous = byId("innocuous");
    innocuous.hidden = !question.innocuous;
    byId("innocuous-label").textContent = question.innocuous ? question.innocuous_label : "";
    byId("innocuous-text").textContent = question.innocuous || "";
    byId("combined-prompt").textContent = question.prompt || "";
    byId("rule-lines").replaceChildren(...rule.lines.map(paragraph));
    const reminder = byId("reminder");
    reminder.textContent = question.reminder;
    reminder.hidden = !question.reminder;
    askNumber(question, chosen);
    byId("answers").replaceChildren(...question.answers.map((answer) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = answer.text;
      button.dataset.answer = answer.label;
      // the answer given before, when the respondent came back to this question
      button.setAttribute("aria-pressed", String(answer.label === chosen));
      button.addEventListener("click", (event) => choose(event, question.id, answer.label));
      return button;
    }));
    byId("back-button").hidden = state.index === 0;
    show("question");
    byId("progress").focus();
  }

  function back(event) {
    if (event.detail > 1 || state.index === 0) {
      return; // a double click goes back one question, not two
    }
    byId("rule-lines").replaceChildren();
    state.index -= 1;
    ask();
  }

  function answerText(question) {
    const label = state.answers[question.id];
    const answer = question.answers.find((item) => item.label === label);
    if (answer) {
      return answer.text;
    }
    const unit = question.number_answer ? question.number_answer.unit : null;
    return unit ? `${label} ${unit}` : label;
  }

  function review() {
    // what will be sent, and nothing else: the questions and the answers, no rule
    byId("review-list").replaceChildren(...state.form.questions.map((question) => {
      const item = document.createElement("li");
      const text = paragraph(question.text);
      text.className = "review-question";
      const answer = paragraph(answerText(question));
      answer.className = "review-answer";
      item.append(text, answer);
      return item;
    }));
    show("review");
    byId("review-text").focus();
  }

  function choose(event, questionId, label) {
    if (event.detail > 1) {
      return; // the second click of a double click (or tap) must not answer the next question
    }
    answer(questionId, label);
  }

  function answer(questionId, label) {
    byId("rule-lines").replaceChildren(); // the rule leaves the page with the answer
    byId("number-input").value = "";
    state.answers[questionId] = label;
    state.index += 1;
    if (state.index < state.form.questions.length) {
      ask();
    } else {
      review();
    }
  }

  function reviewBack(event) {
    if (event.detail > 1) {
      return;
    }
    state.index = state.form.questions.length - 1;
    ask();
  }

  function finish(text, kind) {
    state.answers = null;
    state.drawn = null;
    byId("review-list").replaceChildren();
    state.respondentId = null;
    show(null);
    say(text, kind);
    byId("message").focus();
  }

  async function start(event) {
    event.preventDefault();
    const wording = state.form.wording;
    const input = byId("respondent-id");
    const typed = input.value.trim();
    if (!typed) {
      say(wording.web_id_help, "problem");
      input.focus();
      return;
    }
    const button = byId("start-button");
    button.disabled = true;
    let reply;
    try {
      reply = await post("/start", { respondent_id: typed });
    } catch (error) {
      reply = { status: 0, data: {} };
    }
    button.disabled = false;
    if (reply.status === 200) {
      state.respondentId = reply.data.respondent_id;
      state.group = reply.data.group - 1;
      state.index = 0;
      state.answers = Object.create(null);
      state.drawn = [];
      say("");
      ask();
      return;
    }
    let text = wording.web_error;
    if (reply.status === 409) {
      text = wording.web_used_id;
    } else if (reply.status === 410) {
      text = wording.web_closed;
    } else if (reply.status === 422 || reply.data.reason === "not_issued") {
      text = wording.web_unknown_id;
    }
    say(text, "problem");
    input.focus();
  }

  async function submit() {
    const wording = state.form.wording;
    const button = byId("submit-button");
    button.disabled = true;
    say(wording.web_sending);
    let reply;
    try {
      reply = await post("/submit", { respondent_id: state.respondentId, answers: state.answers });
    } catch (error) {
      reply = { status: 0, data: {} };
    }
    if (reply.status === 201) {
      finish(wording.web_thanks);
    } else if (reply.status === 200) {
      finish(wording.web_already);
    } else if (reply.status === 409) {
      finish(wording.web_conflict, "problem");
    } else if (reply.status === 410) {
      finish(wording.web_closed, "problem");
    } else {
      say(wording.web_error, "problem"); // the answers stay in the page: press Submit again
      button.disabled = false;
    }
  }

  async function load() {
    state.token = document.querySelector('meta[name="csrf-token"]').content;
    const message = byId("message");
    try {
      const response = await fetch("/survey.json", { credentials: "same-origin", cache: "no-store" });
      state.form = await response.json();
    } catch (error) {
      say(message.dataset.error, "problem");
      return;
    }
    if (state.form.grid_bits !== GRID_BITS) {
      say(message.dataset.error, "problem");
      return;
    }
    if (!state.form.open) {
      say(state.form.wording.web_closed, "problem");
      return;
    }
    const link = /^#id=([^&]+)$/.exec(window.location.hash);
    if (link) {
      byId("respondent-id").value = decodeURIComponent(link[1]);
      // the id leaves the address bar and the history
      window.history.replaceState(null, "", window.location.pathname);
    }
    byId("start-form").addEventListener("submit", start);
    byId("submit-button").addEventListener("click", submit);
    byId("back-button").addEventListener("click", back);
    byId("number-form").addEventListener("submit", enterNumber);
    byId("review-back").addEventListener("click", reviewBack);
    show("start");
  }

  document.addEventListener("DOMContentLoaded", load);
})();
