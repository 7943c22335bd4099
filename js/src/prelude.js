// The server-side API a stored procedure or trigger runs against: getContext(), its collection,
// request and response, the JavaScript query API (`__`), `ErrorCodes`, `Error(number, message)`
// and `console.log`, as the service's wrapper script defines them (docs/design/
// server-side-js-research.md, section 1, cited there as [JSW]). Evaluated in each invocation's
// fresh context before the script.
//
// Collection calls are queued, as the service queues them: a call returns `true` (accepted) or
// `false` (not queued: the invocation nears its limits), and its callback runs after the code
// that made the call has returned. The Rust side drains the queue (`next`, then `done` with the
// host's answer), so callbacks that queue further calls never nest on the stack.
(function (global, config) {
  var NativeError = Error;

  // `new Error(number, message)`: the service's engine sets `err.number` (research 1.1).
  function CosmosError(a, b) {
    var numbered = arguments.length >= 2 && typeof a === "number";
    var e = numbered ? new NativeError(b) : new NativeError(a);
    if (numbered) e.number = a;
    return e;
  }
  CosmosError.prototype = NativeError.prototype;
  global.Error = CosmosError;

  var ErrorCodes = Object.freeze({
    BadRequest: 400, Forbidden: 403, NotFound: 404, Conflict: 409, PreconditionFailed: 412,
    RequestEntityTooLarge: 413, RetryWith: 449, InternalServerError: 500,
  });
  global.ErrorCodes = ErrorCodes;

  function fail(number, message) {
    var e = new NativeError(message);
    e.number = number;
    return e;
  }

  // console.log: kept only when the request enables script logging (research 1.11).
  var log = "";
  global.console = {
    log: function (first) {
      if (!config.logging) return;
      if (arguments.length > 1 && typeof first !== "string") {
        throw fail(400, "First argument to console.log should be a string containing zero or more substitution strings.");
      }
      var text = String(first), at = 1, args = arguments;
      if (arguments.length > 1) {
        text = text.replace(/%[s%]/g, function (m) { return m === "%%" ? "%" : (at < args.length ? String(args[at++]) : m); });
      }
      log += text;
    },
  };

  // Request and response: a body with get/set/append, and getValue/setValue/appendValue('Body').
  function bodyHolder(initial, writable, what) {
    var body = initial, set = initial !== undefined;
    var holder = {
      getBody: function () { return body; },
      getValue: function (name) { return name === "Body" ? body : undefined; },
    };
    if (writable) {
      holder.setBody = function (v) { body = v; set = true; };
      holder.appendBody = function (v) { body = (set ? body : "") + v; set = true; };
      holder.setValue = function (name, v) {
        if (name !== "Body") throw fail(400, "Cannot set new values: " + name);
        holder.setBody(v);
      };
      holder.appendValue = function (name, v) {
        if (name !== "Body") throw fail(400, "Cannot set new values: " + name);
        holder.appendBody(v);
      };
    } else {
      holder.setBody = holder.setValue = holder.appendBody = holder.appendValue = function () {
        throw fail(403, "Not a writable property: Body (" + what + ")");
      };
    }
    holder.__state = function () { return { body: body, set: set }; };
    return holder;
  }

  var request = config.request ? bodyHolder(config.request.body, config.request.writable, "request") : undefined;
  if (request) request.getOperationType = function () { return config.request.operation; };
  var response = config.response ? bodyHolder(config.responseBody, true, "response") : undefined;

  // The queue of collection calls, and whether calls are still accepted.
  var queue = [], inflight = null, accepting = true, queued = 0;
  function accept() {
    if (accepting && (queued >= config.maxOperations || Date.now() >= config.acceptUntil)) accepting = false;
    return accepting;
  }

  function argumentsError(name, least, got) {
    return fail(400, 'The function "' + name + '" requires at least ' + least + " argument(s) but was called with " + got + " argument(s).");
  }

  // (options, callback) in either presence, as the wrapper takes them.
  function optionsAndCallback(options, callback) {
    if (typeof options === "function" && callback === undefined) return [{}, options];
    if (options !== undefined && options !== null && typeof options !== "object") {
      throw fail(400, 'The "options" parameter must be of type "object". Actual type is: "' + typeof options + '".');
    }
    if (callback !== undefined && typeof callback !== "function") {
      throw fail(400, 'The "callback" parameter must be of type "function". Actual type is: "' + typeof callback + '".');
    }
    return [options || {}, callback];
  }

  function trimmed(link) { return link.charAt(link.length - 1) === "/" ? link.slice(0, -1) : link; }
  var links = [trimmed(config.selfLink), trimmed(config.altLink)];

  function checkCollection(link) {
    if (typeof link !== "string") throw fail(400, 'Invalid collection link: "' + link + '".');
    if (links.indexOf(trimmed(link)) < 0) {
      throw fail(400, 'Function is not allowed to operate on resources outside current collection. Make sure that the link provided, "' + link + '", belongs to current collection.');
    }
  }

  // A document link's last segment: the item's `_rid` under the self link, its id under the alt
  // link ({ id, byRid }).
  function documentRef(link) {
    if (typeof link !== "string") throw fail(400, 'Invalid document link: "' + link + '".');
    for (var i = 0; i < links.length; i++) {
      var prefix = links[i] + "/docs/";
      if (link.indexOf(prefix) === 0 && link.length > prefix.length) return { id: trimmed(link.slice(prefix.length)), byRid: i === 0 };
    }
    throw fail(400, 'Function is not allowed to operate on resources outside current collection. Make sure that the link provided, "' + link + '", belongs to current collection.');
  }

  function documentBody(body) {
    if (typeof body === "string") {
      try { body = JSON.parse(body); } catch (e) { body = undefined; }
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw fail(400, "The document body must be an object or a string representing a JSON-serialized object.");
    }
    return body;
  }

  function newId() {
    return "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".replace(/x/g, function () { return (Math.random() * 16 | 0).toString(16); });
  }

  function enqueue(op, args, callback, twoArguments) {
    if (!accept()) return false;
    queued++;
    queue.push({ op: op, args: args, callback: callback, twoArguments: twoArguments });
    return true;
  }

  function withId(body, options) {
    if (!body.id && !options.disableAutomaticIdGeneration) {
      var copy = {};
      for (var k in body) copy[k] = body[k];
      copy.id = newId();
      return copy;
    }
    return body;
  }

  var collection = {
    getSelfLink: function () { return config.selfLink; },
    getAltLink: function () { return config.altLink; },
    createDocument: function (link, body, options, callback) {
      if (arguments.length < 2) throw argumentsError("createDocument", 2, arguments.length);
      checkCollection(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("create", { body: withId(documentBody(body), oc[0]) }, oc[1]);
    },
    upsertDocument: function (link, body, options, callback) {
      if (arguments.length < 2) throw argumentsError("upsertDocument", 2, arguments.length);
      checkCollection(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("upsert", { body: withId(documentBody(body), oc[0]), etag: oc[0].etag }, oc[1]);
    },
    replaceDocument: function (link, body, options, callback) {
      if (arguments.length < 2) throw argumentsError("replaceDocument", 2, arguments.length);
      var ref = documentRef(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("replace", { id: ref.id, byRid: ref.byRid, body: documentBody(body), etag: oc[0].etag }, oc[1]);
    },
    deleteDocument: function (link, options, callback) {
      if (arguments.length < 1) throw argumentsError("deleteDocument", 1, arguments.length);
      var ref = documentRef(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("delete", { id: ref.id, byRid: ref.byRid, etag: oc[0].etag }, oc[1], true);
    },
    readDocument: function (link, options, callback) {
      if (arguments.length < 1) throw argumentsError("readDocument", 1, arguments.length);
      var ref = documentRef(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("read", { id: ref.id, byRid: ref.byRid, ifNoneMatch: oc[0].ifNoneMatch }, oc[1]);
    },
    patchDocument: function (link, spec, options, callback) {
      if (arguments.length < 2) throw argumentsError("patchDocument", 2, arguments.length);
      var ref = documentRef(link);
      if (spec === null || typeof spec !== "object") throw fail(400, "The patch specification must be an object or an array.");
      var oc = optionsAndCallback(options, callback);
      var operations = Array.isArray(spec) ? spec : spec.operations;
      return enqueue("patch", { id: ref.id, byRid: ref.byRid, operations: operations, condition: spec.condition, etag: oc[0].etag }, oc[1]);
    },
    readDocuments: function (link, options, callback) {
      if (arguments.length < 1) throw argumentsError("readDocuments", 1, arguments.length);
      checkCollection(link);
      var oc = optionsAndCallback(options, callback);
      return enqueue("query", { query: "SELECT * FROM root", pageSize: oc[0].pageSize || 100, continuation: oc[0].continuation }, oc[1]);
    },
    queryDocuments: function (link, query, options, callback) {
      if (arguments.length < 2) throw argumentsError("queryDocuments", 2, arguments.length);
      checkCollection(link);
      if (typeof query !== "string" && (query === null || typeof query !== "object")) {
        throw fail(400, 'The "filterQuery" parameter must be of type "string" or "object". Actual type is: "' + typeof query + '".');
      }
      var oc = optionsAndCallback(options, callback);
      var spec = typeof query === "string" ? { query: query, parameters: [] } : { query: query.query, parameters: query.parameters || [] };
      return enqueue("query", { query: spec.query, parameters: spec.parameters, pageSize: oc[0].pageSize || 100, continuation: oc[0].continuation }, oc[1]);
    },
  };

  // The JavaScript query API (research 1.10): over the logical partition's items, read whole.
  function feedCall(transform) {
    return function () {
      var args = Array.prototype.slice.call(arguments);
      var fn = args.shift(), oc = optionsAndCallback(args[0], args[1]);
      if (typeof fn !== "function" && typeof fn !== "string") throw fail(400, "The predicate/transform function must be provided.");
      var accepted = enqueue("query", { query: "SELECT * FROM root", pageSize: -1 }, function (err, docs, options) {
        if (err) { if (oc[1]) return oc[1](err); throw err; }
        var out = transform(docs, fn);
        if (oc[1]) oc[1](undefined, out, options);
        else if (response) response.appendBody(JSON.stringify(out));
        else throw fail(400, "The callback function must be provided for scenarios, such as pre-trigger, when response object is not available.");
      });
      return { isAccepted: accepted };
    };
  }
  function keyOf(fn, doc) { return typeof fn === "string" ? doc[fn] : fn(doc); }
  function sorted(docs, fn, sign) {
    return docs.slice().sort(function (a, b) {
      var x = keyOf(fn, a), y = keyOf(fn, b);
      return x < y ? -sign : x > y ? sign : 0;
    });
  }
  var queries = {
    filter: function (docs, fn) { return docs.filter(function (d) { return fn(d); }); },
    map: function (docs, fn) { return docs.map(function (d) { return fn(d); }); },
    pluck: function (docs, name) { return docs.map(function (d) { return d[name]; }); },
    sortBy: function (docs, fn) { return sorted(docs, fn, 1); },
    sortByDescending: function (docs, fn) { return sorted(docs, fn, -1); },
  };
  var underscore = Object.create(collection);
  Object.keys(queries).forEach(function (name) { underscore[name] = feedCall(queries[name]); });
  underscore.flatten = function (isShallow, options, callback) {
    return feedCall(function (docs) { return [].concat.apply([], docs); })(function () {}, options, callback);
  };
  underscore.chain = function () {
    var steps = [], chain = {};
    Object.keys(queries).forEach(function (name) {
      chain[name] = function (fn) {
        if (arguments.length > 1) throw fail(400, 'When using "chain", options can only be provided on the call to the "value" function');
        steps.push(function (docs) { return queries[name](docs, fn); });
        return chain;
      };
    });
    chain.flatten = function () { steps.push(function (docs) { return [].concat.apply([], docs); }); return chain; };
    chain.value = function (options, callback) {
      if (typeof options === "function") { callback = options; options = undefined; }
      return feedCall(function (docs) { return steps.reduce(function (d, step) { return step(d); }, docs); })(function () {}, options, callback);
    };
    return chain;
  };
  if (request) underscore.request = request;
  if (response) underscore.response = response;
  global.__ = underscore;

  var context = {
    getCollection: function () { return collection; },
    abort: function (err) { throw err === undefined ? fail(400, "The script aborted.") : err; },
  };
  if (request) context.getRequest = function () { return request; };
  if (response) context.getResponse = function () { return response; };
  global.getContext = function () { return context; };

  // What the Rust side calls.
  return {
    start: function (fn, args) { return fn.apply(context, args); },
    next: function () {
      if (inflight || queue.length === 0) return null;
      inflight = queue.shift();
      return JSON.stringify({ op: inflight.op, args: inflight.args });
    },
    done: function (replyText) {
      var job = inflight, reply = JSON.parse(replyText);
      inflight = null;
      var err;
      if (reply.error) {
        err = new NativeError(reply.error.body);
        err.number = reply.error.number;
        err.body = reply.error.body;
      }
      if (!job.callback) {
        if (err) throw err;
        return;
      }
      if (job.twoArguments) job.callback.call(collection, err, reply.options || {});
      else job.callback.call(collection, err, err ? undefined : reply.result, reply.options || {});
    },
    finish: function () {
      return JSON.stringify({
        response: response ? response.__state() : null,
        request: request ? request.__state() : null,
        log: log,
      });
    },
  };
})
