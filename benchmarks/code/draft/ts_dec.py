import json, sys
sys.path.insert(0, "/tmp/cb/tool")
from build import build
props = json.load(open("/tmp/cb/ts.prop.json"))
dec = {}
def U(i): dec[i] = "U:" + ",".join(props[i]["cands"])
for i, p in enumerate(props):
    r, n, f = p["recv"], p["name"], p["path"]
    if p["caller"] == "":
        dec[i] = "skip"  # top-level code of a file: no enclosing symbol to name
    elif p["prop"] is None:
        if r in ("subscriber", "sink", "destination") and n in ("next", "error", "complete") and "Subject.ts" not in f or (
                r == "subscriber" and p["caller"] in ("Subject._checkFinalizedStatuses", "BehaviorSubject._subscribe",
                                                      "ReplaySubject._subscribe", "AsyncSubject._checkFinalizedStatuses")):
            dec[i] = "T:Subscriber." + n  # declared Subscriber<...>: no subclass in the corpus overrides next/error/complete
        elif r in ("source", "this.source", "innerFrom(project(value, index++))") and n in ("subscribe", "pipe"):
            dec[i] = "T:Observable." + n  # declared Observable<T>; no subclass overrides subscribe/pipe
        elif n == "add" and r in ("destination", "subscriber"):
            dec[i] = "T:Subscription.add"
        elif r in ("parent", "_parentage", "teardown"):
            dec[i] = "T:Subscription." + n
        elif r == "super":
            base = {"Subscriber": "Subscription", "Subject": "Observable", "BehaviorSubject": "Subject",
                    "ReplaySubject": "Subject", "AsyncSubject": "Subject", "OperatorSubscriber": "Subscriber"}[p["caller"].split(".")[0]]
            owner = {"Subscription.unsubscribe": "Subscription", "Observable._trySubscribe": "Observable",
                     "Subject._subscribe": "Subject", "Subject.next": "Subject", "Subject.complete": "Subject",
                     "Subscriber.unsubscribe": "Subscriber"}
            dec[i] = "T:" + base + "." + n
        elif r == "this" and p["caller"].startswith(("BehaviorSubject", "ReplaySubject")):
            dec[i] = "T:Subject." + n  # inherited from Subject
        elif r == "this" and p["caller"] == "SafeSubscriber.constructor":
            dec[i] = "T:Subscriber.unsubscribe"
        elif r == "this" and p["caller"] == "operate":
            dec[i] = "T:Subscriber.error"  # function (this: Subscriber<R>, ...)
        elif r == "subscriber" and n == "unsubscribe":
            dec[i] = "T:Subscriber.unsubscribe"  # a new SafeSubscriber
        elif r == "Object":
            dec[i] = "X:Object.create, a builtin"
        elif r == "fns":
            dec[i] = "X:Array.prototype.reduce, not the reduce operator"
        elif r is None and n == "next":
            dec[i] = "X:calls the parameter next, a callback"
        elif r == "tapObserver" and n in ("subscribe", "unsubscribe", "finalize"):
            dec[i] = "X:a callback property of a TapObserver, not a method of the corpus"
        elif r == "source" and n == "lift":
            dec[i] = "U:Observable.lift,Subject.lift"
        else:
            U(i)  # an Observer / Unsubscribable interface: any implementation
    # this.m() where a subclass in the corpus overrides m: virtual dispatch
    if p["recv"] == "this" and p["caller"] == "Subject._subscribe" and n == "_checkFinalizedStatuses":
        dec[i] = "U:Subject._checkFinalizedStatuses,AsyncSubject._checkFinalizedStatuses"
    if p["recv"] == "this" and p["caller"] in ("Subscriber._error", "Subscriber._complete") and n == "unsubscribe":
        dec[i] = "U:Subscriber.unsubscribe,OperatorSubscriber.unsubscribe"
    if p["recv"] == "this" and p["caller"].startswith("Observable.") and n == "_subscribe":
        dec[i] = "U:Observable._subscribe,Subject._subscribe,BehaviorSubject._subscribe,ReplaySubject._subscribe,AnonymousSubject._subscribe"
    if p["recv"] == "this" and p["caller"].startswith("Observable.") and n == "_trySubscribe":
        dec[i] = "U:Observable._trySubscribe,Subject._trySubscribe"
files = open("/tmp/cb/tsfiles").read().split()
corpus = {"registry": "npm", "package": "rxjs", "version": "7.8.1", "fetch": "npm pack rxjs@7.8.1",
          "archive": "rxjs-7.8.1.tgz", "root": "package", "files": files}
out = build("typescript", "/tmp/cb/ts.prop.json", "/tmp/cb/ts.json", "/tmp/cb/x/rxjs", corpus, dec)
json.dump(out, open(sys.argv[1], "w"), indent=1)
for e in out["edges"]:
    pass
from collections import Counter
print(Counter(e["kind"] for e in out["edges"]), len({(e["caller"], e["callee"]) for e in out["edges"] if e["kind"] == "true"}))
