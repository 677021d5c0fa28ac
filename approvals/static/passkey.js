// passkey.js registers a passkey and approves with one (WebAuthn). The
// page's server draws every challenge and checks every answer; this script
// only carries bytes between the browser's authenticator and the page's
// forms, which post as they do without it.
(function () {
  "use strict";

  function b64u(buf) {
    var s = "", b = new Uint8Array(buf);
    for (var i = 0; i < b.length; i++) { s += String.fromCharCode(b[i]); }
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function unb64u(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) { s += "="; }
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out;
  }

  function ids(list) {
    (list || []).forEach(function (c) { c.id = unb64u(c.id); });
  }

  // options posts form (its token, operation and ticked lines) to url and
  // returns the options the server drew, or throws its error.
  function options(url, form) {
    return fetch(url, { method: "POST", credentials: "same-origin", body: new URLSearchParams(new FormData(form)) })
      .then(function (r) {
        return r.json().then(function (o) {
          if (!r.ok) { throw new Error(o.error || r.statusText); }
          return o;
        });
      });
  }

  function say(text) {
    var el = document.getElementById("passkey-status");
    if (el) { el.textContent = text; }
  }

  // assertionJSON is the JSON the page reads of an assertion c.
  function assertionJSON(c) {
    var r = c.response;
    return JSON.stringify({
      id: c.id, rawId: b64u(c.rawId), type: c.type,
      response: {
        authenticatorData: b64u(r.authenticatorData), clientDataJSON: b64u(r.clientDataJSON),
        signature: b64u(r.signature), userHandle: r.userHandle ? b64u(r.userHandle) : null
      },
      clientExtensionResults: c.getClientExtensionResults()
    });
  }

  // ask asks a passkey for the options url draws for form and puts its
  // assertion in the form.
  function ask(url, form) {
    return options(url, form).then(function (o) {
      var pk = o.publicKey;
      pk.challenge = unb64u(pk.challenge);
      ids(pk.allowCredentials);
      return navigator.credentials.get({ publicKey: pk });
    }).then(function (c) {
      form.elements.assertion.value = assertionJSON(c);
    });
  }

  // confirm asks a passkey as ask does, then posts the form.
  function confirm(url, form, done) {
    return ask(url, form).then(function () {
      say(done);
      form.submit();
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("form.passkey-remove"), function (f) {
    f.addEventListener("submit", function (ev) {
      if (f.elements.assertion.value) { return; }
      ev.preventDefault();
      say("Confirm the removal with one of your passkeys…");
      confirm("/passkeys/remove/options", f, "Passkey confirmed; removing…").catch(function (e) {
        say("Nothing was removed: the passkey did not confirm (" + e.message + ").");
      });
    });
  });

  var approve = document.getElementById("approve-form");
  if (approve && approve.dataset.passkey) {
    approve.addEventListener("submit", function (ev) {
      if (approve.elements.assertion.value) { return; }
      ev.preventDefault();
      say("Confirm with your passkey…");
      confirm(approve.dataset.passkey, approve, "Passkey confirmed; recording your approval…").catch(function (e) {
        say("Nothing was approved: the passkey did not confirm (" + e.message + ").");
      });
    });
  }

  var register = document.getElementById("passkey-form");
  if (register) {
    register.addEventListener("submit", function (ev) {
      if (register.elements.credential.value) { return; }
      ev.preventDefault();
      var first = Promise.resolve();
      if (register.dataset.confirm) {
        say("Confirm with a passkey you already have…");
        first = ask(register.dataset.confirm, register);
      }
      first.then(function () {
        say("Follow your browser's prompt to create the passkey…");
        return options("/passkeys/options", register);
      }).then(function (o) {
        var pk = o.publicKey;
        pk.challenge = unb64u(pk.challenge);
        pk.user.id = unb64u(pk.user.id);
        ids(pk.excludeCredentials);
        return navigator.credentials.create({ publicKey: pk });
      }).then(function (c) {
        var r = c.response;
        register.elements.credential.value = JSON.stringify({
          id: c.id, rawId: b64u(c.rawId), type: c.type,
          response: {
            attestationObject: b64u(r.attestationObject), clientDataJSON: b64u(r.clientDataJSON),
            transports: r.getTransports ? r.getTransports() : []
          },
          clientExtensionResults: c.getClientExtensionResults()
        });
        register.submit();
      }).catch(function (e) {
        say("No passkey was registered (" + e.message + ").");
      });
    });
  }
})();
