"""Checks of rlvr_client.py against a running reward service; test/serve/client-python.test.ts starts the service
and runs this script (standard library only, so any python3 will do).

The service at $RLVR_TEST_URL requires the token $RLVR_TEST_TOKEN, serves one score request at a time
(concurrency 1) and has the test rewards `echo` (length of the completion), `wait` (answers once the Node side opens
its gate, which it does when it sees a 429), `count-tokens` (the number of example.tokens) and the built-in
`math-answer`, plus the built-in tasks. Each check prints "ok <name>"; a failure raises.
"""
import os
import socket
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rlvr_client as rc  # noqa: E402

URL = os.environ["RLVR_TEST_URL"]
TOKEN = os.environ["RLVR_TEST_TOKEN"]


def client(**kw):
    return rc.RewardClient(URL, TOKEN, **kw)


def raises(exc_type, fn):
    try:
        fn()
    except exc_type as e:
        return e
    raise AssertionError(f"expected {exc_type.__name__}")


def check_token():
    c = rc.RewardClient(URL, token=None, retries=3, backoff=0.001)
    e = raises(rc.RewardServiceError, lambda: c.score([{"reward": "echo", "completion": "a", "example": {"gold": 0}}]))
    assert (e.status, e.code) == (401, "unauthorized"), e
    assert c.requests == 1, "a 401 is not retried"
    assert c.health() == {"status": "ok"}  # /healthz needs no token
    assert "math-answer" in [r["name"] for r in client().rewards()]


def check_batching():
    c = client(batch_size=3)
    texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "ggggggg"]
    got = c.scores([{"reward": "echo", "completion": t, "example": {"gold": None}} for t in texts])
    assert got == [1, 2, 3, 4, 5, 6, 7], got
    assert c.requests == 3, c.requests


def check_trl_reward():
    f = rc.trl_reward("math-answer", client=client(batch_size=2))
    assert f.__name__ == "rlvr/math-answer"  # TRL logs rewards/<__name__>/mean
    metrics = []
    chat = [{"role": "assistant", "content": [{"type": "text", "text": "so \\boxed{9}"}]}]
    got = f(prompts=["p1", "p2", "p3", [{"role": "user", "content": "p4"}]],
            completions=["\\boxed{42}", "\\boxed{41}", "\\boxed{1}", chat],
            completion_ids=[[1], [2], [3], [4]], answer=["42", "42", "", "9"], trainer_state=object(),
            log_metric=lambda name, value: metrics.append((name, value)))
    assert got == [1, 0, None, 1], got  # gold "" cannot be parsed: None, which TRL turns into NaN
    assert metrics == [("rlvr/math-answer/unscorable_frac", 0.25)], metrics
    task = rc.TrlReward(task="addition", gold=lambda row: {"answer": row["answer"]}, client=client())
    got = task(prompts=["5+7="], completions=["\\boxed{12}"], answer=["12"])
    assert abs(got[0] - 1.2) < 1e-12, got  # correct 1 + format 0.2
    tokens = rc.trl_reward("count-tokens", client=client(), send_token_ids=True)
    assert tokens(prompts=["p"], completions=["x"], completion_ids=[[5, 6, 7]], answer=["0"]) == [3]
    no_gold = rc.trl_reward("echo", gold=None, client=client())  # no gold column needed
    assert no_gold(prompts=["p", "q"], completions=["xyz", ""]) == [3, 0]
    e = raises(KeyError, lambda: f(prompts=["p"], completions=["x"], solution=["1"]))
    assert "no gold column 'answer'" in str(e) and "solution" in str(e), e


def check_bad_reward():
    f = rc.trl_reward("no-such-reward", client=client())
    e = raises(rc.ItemError, lambda: f(prompts=["p"], completions=["x"], answer=["1"]))
    assert e.code == "unknown-reward" and "math-answer" in e.message, e  # the message lists the known rewards
    bad = rc.trl_reward("math-answer", options={"region": "nowhere"}, client=client())
    e = raises(rc.ItemError, lambda: bad(prompts=["p"], completions=["x"], answer=["1"]))
    assert e.code == "invalid-options" and "region" in e.message, e


def check_verl():
    table = {"gsm": "math-answer", "add": {"task": "addition", "gold_field": "answer"}}
    s = rc.VerlScorer(table, client=client())
    assert s("gsm", "\\boxed{42}", "42") == 1.0
    assert s("add", "\\boxed{12}", "12") == 1.2
    assert s("gsm", "\\boxed{42}", "") == 0.0 and s.unscorable == 1 and s.scored == 2
    e = raises(KeyError, lambda: s("other", "x", "1"))
    assert "'other'" in str(e) and "gsm" in str(e), e
    kw = dict(rewards=table, url=URL, token=TOKEN)
    assert rc.compute_score("gsm", "\\boxed{3}", "3", None, **kw) == 1.0
    assert rc.compute_score_batch(["gsm", "add"], ["\\boxed{3}", "\\boxed{1}"], ["4", "1"], [None, None], **kw) == [0.0, 1.2]


def check_timeout():
    c = client(timeout=0.3, retries=3, backoff=0.001)
    t0 = time.perf_counter()
    e = raises(rc.RewardServiceError, lambda: c.score([{"reward": "hang", "completion": "", "example": {"gold": 0}}]))
    assert e.code == "timeout" and c.requests == 1, (e, c.requests)
    assert time.perf_counter() - t0 < 2.0


def check_retry_after_429():
    holder = client()
    box = {}
    t = threading.Thread(target=lambda: box.update(r=holder.scores([{"reward": "wait", "completion": "",
                                                                      "example": {"gold": 0}}])))
    t.start()
    while "rlvr_serve_requests_in_flight 1" not in metrics_text():  # the only slot is taken
        time.sleep(0.01)
    c = client(backoff=0.01)
    t0 = time.perf_counter()
    got = c.scores([{"reward": "echo", "completion": "abcd", "example": {"gold": 0}}])
    waited = time.perf_counter() - t0
    t.join()
    assert got == [4] and box["r"] == [1], (got, box)
    assert c.retried >= 1 and waited >= 0.95, (c.retried, waited)  # Retry-After: 1 s, not the 10 ms back-off


def check_unreachable():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = rc.RewardClient(f"http://127.0.0.1:{port}", retries=2, backoff=0.001)
    e = raises(rc.RewardServiceError, c.health)
    assert e.code == "unreachable" and c.requests == 3, (e, c.requests)


def check_request_id():
    """Every attempt of one request carries the same X-Request-Id (and body); another request gets another id."""
    import http.server

    seen = []

    class Flaky(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            seen.append((self.headers.get("x-request-id"), body))
            first = len(seen) % 2 == 1  # each request: a 503 first, then the answer
            self.send_response(503 if first else 200)
            out = b'{"error":{"code":"draining","message":"x"}}' if first else b'{"results":[{"score":1,"terms":{}}]}'
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        c = rc.RewardClient(f"http://127.0.0.1:{srv.server_address[1]}", retries=2, backoff=0.001)
        item = {"reward": "echo", "completion": "a", "example": {"gold": 0}}
        assert c.scores([item]) == [1] and c.scores([item]) == [1], seen
    finally:
        srv.shutdown()
    ids = [i for i, _ in seen]
    assert len(seen) == 4 and ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2], ids
    assert all(i and len(i) == 32 for i in ids) and seen[0][1] == seen[1][1], seen


def metrics_text():
    req = urllib.request.Request(URL + "/metrics", headers={"authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=5) as res:
        return res.read().decode()


if __name__ == "__main__":
    for name, fn in list(globals().items()):
        if name.startswith("check_"):
            fn()
            print("ok", name[len("check_"):], flush=True)
