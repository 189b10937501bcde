"""rlvr_client: a dependency-free Python client of rlvr's reward service (`rlvr serve-rewards`).

Standard library only (urllib, json, time), so it drops into any trainer's environment: copy this one file, or load
it from the installed npm package (`node_modules/rlvr/clients/python/rlvr_client.py`). It holds:

- `RewardClient`: `score(items)`, `rewards()`, `health()` against `POST /v1/score`, `GET /v1/rewards`, `GET /healthz`
  (docs/reward-service.md), with batching, a timeout and retries;
- `TrlReward` / `trl_reward(...)`: a TRL `GRPOTrainer` `reward_funcs` entry;
- `VerlScorer` / `compute_score` / `compute_score_batch`: verl's custom reward function.

Retries (docs/reward-clients.md): a request is retried, up to `retries` times, when the connection fails (refused,
reset, closed), on 429 (after the server's Retry-After, or the back-off if longer) and on 5xx, waiting
`backoff * 2**attempt` seconds (at most `max_backoff`). A 4xx other than 429 is never retried: the request itself is
wrong and would fail again. A request that outlives `timeout` is not retried either (the server is still working on
it; sending it again doubles the load): it raises `RewardServiceError` with code "timeout".

Item results: `score: None` means the service could not score the completion (e.g. the gold cannot be parsed); TRL
treats None as NaN and leaves the completion out of its group's baseline. Errors of one completion (`reward-failed`,
`timeout`) become None by default, as in rlvr's own trainer (`rewards.score` turns a throwing checker into score
null). Every other item error (`unknown-reward`, `unknown-task`, `invalid-options`, or a code this client does not
know) raises `ItemError`: a misspelt reward must stop the run, not train on NaNs or zeros.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.error
import urllib.request
import uuid

__all__ = [
    "RewardClient",
    "RewardServiceError",
    "ItemError",
    "TrlReward",
    "trl_reward",
    "VerlScorer",
    "compute_score",
    "compute_score_batch",
    "completion_text",
]

TOKEN_ENV = "RLVR_REWARD_TOKEN"
URL_ENV = "RLVR_REWARD_URL"
DEFAULT_URL = "http://127.0.0.1:8765"
# Item error codes of one completion (its checker threw or ran out of time): None unless on_item_error="raise".
# Every other code (an unknown reward or task, bad options, a service fault) is raised: it is not the completion's.
COMPLETION_ERRORS = frozenset({"reward-failed", "timeout"})


class RewardServiceError(Exception):
    """The service answered an error (or none): `status` (0 when no HTTP answer), `code`, `message`, `issues`."""

    def __init__(self, status, code, message, issues=None):
        super().__init__(f"rlvr reward service: {status or 'no answer'} {code}: {message}")
        self.status, self.code, self.message, self.issues = status, code, message, issues or []


class ItemError(Exception):
    """An item the service could not score: `index` (in the caller's list), `code`, `message`."""

    def __init__(self, index, code, message):
        super().__init__(f"rlvr reward service: item {index}: {code}: {message}")
        self.index, self.code, self.message = index, code, message


class RewardClient:
    """Client of one reward service.

    Args:
        url: base URL (default `$RLVR_REWARD_URL`, else http://127.0.0.1:8765).
        token: bearer token (default `$RLVR_REWARD_TOKEN`, else none).
        timeout: seconds one HTTP request may take.
        batch_size: most items per request (keep it at most the server's `--max-items`, 512 by default).
        retries: retries of one request after a connection error, 429 or 5xx (0: never retry).
        backoff: seconds before the first retry; doubles with each retry, at most `max_backoff`.
        sleep: the wait function (tests pass their own).
    """

    def __init__(self, url=None, token=None, timeout=120.0, batch_size=256, retries=5, backoff=0.5,
                 max_backoff=30.0, sleep=time.sleep):
        if batch_size < 1 or retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError("RewardClient: batch_size >= 1, retries >= 0, timeout > 0 and backoff >= 0 are needed")
        self.url = (url or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.timeout, self.batch_size, self.retries = timeout, batch_size, retries
        self.backoff, self.max_backoff, self.sleep = backoff, max_backoff, sleep
        self.requests = 0  # HTTP requests sent, retries included
        self.retried = 0  # of which retries

    def score(self, items):
        """Scores `items` (dicts as in `POST /v1/score`) in requests of at most `batch_size`; returns one result
        per item, in order: `{score, terms, info?}` or `{error: {code, message}}`."""
        items = list(items)
        results = []
        for start in range(0, len(items), self.batch_size):
            body = {"items": items[start:start + self.batch_size]}
            results.extend(self._request("POST", "/v1/score", body)["results"])
        return results

    def scores(self, items, on_item_error="none"):
        """Like `score`, but only the scores (None when unscorable). An item error of the completion itself
        (`reward-failed`, `timeout`) gives None, or raises `ItemError` when `on_item_error="raise"`; any other item
        error (unknown reward or task, bad options, a service fault) raises `ItemError`."""
        if on_item_error not in ("none", "raise"):
            raise ValueError('on_item_error must be "none" or "raise"')
        out = []
        for i, r in enumerate(self.score(items)):
            err = r.get("error")
            if err is not None:
                if err["code"] not in COMPLETION_ERRORS or on_item_error == "raise":
                    raise ItemError(i, err["code"], err["message"])
                out.append(None)
            else:
                out.append(r.get("score"))
        return out

    def rewards(self):
        """The service's rewards with their option schemas (`GET /v1/rewards`)."""
        return self._request("GET", "/v1/rewards")

    def health(self):
        """`GET /healthz`: `{"status": "ok"}` when the service is up."""
        return self._request("GET", "/healthz")

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = "Bearer " + self.token
        if data is not None:
            # One id for every attempt: a retry after a lost answer finds its queued jobs instead of scoring again.
            headers["x-request-id"] = uuid.uuid4().hex
        attempt = 0
        while True:
            self.requests += 1
            wait, outcome = self._attempt(method, path, data, headers)
            if wait is None:
                return outcome  # the parsed answer
            if attempt >= self.retries:
                raise outcome  # the last error
            delay = max(wait, min(self.max_backoff, self.backoff * 2 ** attempt))
            attempt += 1
            self.retried += 1
            self.sleep(delay)

    def _attempt(self, method, path, data, headers):
        """One request: (None, answer) on success, (seconds to wait at least, error) when it may be retried;
        raises when it may not."""
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return None, json.loads(res.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            err = _error_of(e)
            if e.code == 429 or e.code >= 500:  # busy, draining or failing: worth another try
                return _retry_after(e.headers.get("retry-after")), err
            raise err from None
        except (socket.timeout, TimeoutError) as e:
            raise RewardServiceError(0, "timeout", f"{method} {path}: no answer within {self.timeout} s") from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise RewardServiceError(0, "timeout", f"{method} {path}: no answer within {self.timeout} s") from e
            return 0.0, RewardServiceError(0, "unreachable", f"{method} {self.url}{path}: {e.reason}")
        except (ConnectionError, http.client.HTTPException) as e:
            return 0.0, RewardServiceError(0, "unreachable", f"{method} {self.url}{path}: {e!r}")


def _error_of(e):
    try:
        body = json.loads(e.read().decode("utf-8"))
        err = body["error"] if isinstance(body.get("error"), dict) else {"message": str(body.get("error"))}
    except Exception:  # noqa: BLE001 - a non-JSON error body (a proxy's) is reported by its status
        err = {}
    return RewardServiceError(e.code, err.get("code", "http-%d" % e.code), err.get("message", e.reason),
                              err.get("issues"))


def _retry_after(value):
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0  # absent, or an HTTP date: the back-off decides


def completion_text(completion):
    """The text of a TRL completion: a string as is; a chat completion (a list of messages) gives its last
    assistant message's content (text parts joined)."""
    if isinstance(completion, str):
        return completion
    turns = _assistant_turns(completion)
    return turns[-1] if turns else ""


def _assistant_turns(messages):
    return [_content_text(m.get("content")) for m in messages if m.get("role", "assistant") == "assistant"]


def _content_text(content):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")


def _prompt_text(prompt):
    if prompt is None or isinstance(prompt, str):
        return prompt
    users = [_content_text(m.get("content")) for m in prompt if m.get("role") == "user"]
    return users[-1] if users else None


def _target(reward, task, options):
    if (reward is None) == (task is None):
        raise ValueError("name exactly one of reward= (a registered reward) or task= (a built-in task)")
    if reward is not None:
        return {"reward": reward, **({"options": options} if options else {})}
    return {"task": task, **({"taskOptions": options} if options else {})}


class TrlReward:
    """A TRL `reward_funcs` entry scoring each completion with one rlvr reward (or task) through the service.

    TRL 1.13 calls it as `f(prompts=..., completions=..., completion_ids=..., **columns)`, where the dataset's
    columns arrive as lists, one value per completion, plus `trainer_state`, `log_extra` and `log_metric`; it must
    return one float (or None: TRL's NaN, "not scorable") per completion. One call is one request per `batch_size`
    completions.

    Args:
        reward / task: the registered reward (`GET /v1/rewards`) or built-in task to score with (exactly one).
        options: the reward's options (or the task's, for `task`).
        gold: the dataset column holding the gold answer, or a function of the row (a dict of the columns) that
            returns it in the shape the reward documents, e.g. `lambda row: {"answer": row["answer"]}`, or None
            for rewards that read no gold (length, format).
        client: a `RewardClient` (default: one from url and token, or the environment).
        name: the name TRL logs it under (`rewards/<name>/mean`); default `rlvr/<reward or task>`.
        send_prompt: send the prompt (its last user message for chat prompts) as `example.prompt`.
        send_token_ids: send TRL's completion token ids as `example.tokens` (length rewards count tokens).
        on_item_error: "none" (default) or "raise" for per-completion errors (`reward-failed`, `timeout`).
    """

    def __init__(self, reward=None, *, task=None, options=None, gold="answer", client=None, url=None, token=None,
                 name=None, send_prompt=True, send_token_ids=False, on_item_error="none"):
        self.target = _target(reward, task, options)
        self.gold = gold
        self.client = client or RewardClient(url=url, token=token)
        self.__name__ = name or "rlvr/" + (reward or task)
        self.send_prompt, self.send_token_ids, self.on_item_error = send_prompt, send_token_ids, on_item_error

    def __call__(self, prompts=None, completions=None, completion_ids=None, **columns):
        if completions is None:
            raise TypeError(f"{self.__name__}: TRL passes completions=...; none were given")
        n = len(completions)
        golds = self._golds(n, columns)
        items = []
        for i, c in enumerate(completions):
            example = {"gold": golds[i]}
            prompt = _prompt_text(prompts[i]) if self.send_prompt and prompts is not None else None
            if prompt is not None:
                example["prompt"] = prompt
            if self.send_token_ids and completion_ids is not None:
                example["tokens"] = [int(t) for t in completion_ids[i]]
            if not isinstance(c, str) and len(_assistant_turns(c)) > 1:
                example["turns"] = _assistant_turns(c)
            items.append({**self.target, "completion": completion_text(c), "example": example})
        scores = self.client.scores(items, self.on_item_error)
        log_metric = columns.get("log_metric")
        if callable(log_metric) and n:
            log_metric(f"{self.__name__}/unscorable_frac", sum(s is None for s in scores) / n)
        return scores

    def _golds(self, n, columns):
        if self.gold is None:  # rewards that need no gold (length, format): JSON null
            return [None] * n
        if callable(self.gold):
            rows = [{k: v[i] for k, v in columns.items() if isinstance(v, (list, tuple)) and len(v) == n}
                    for i in range(n)]
            return [self.gold(row) for row in rows]
        if self.gold not in columns:
            have = sorted(k for k, v in columns.items() if isinstance(v, (list, tuple)))
            raise KeyError(f"{self.__name__}: the dataset has no gold column {self.gold!r}; columns: {have}")
        return list(columns[self.gold])


def trl_reward(reward=None, **kwargs):
    """Shorthand for `TrlReward(reward, **kwargs)`: `GRPOTrainer(reward_funcs=[trl_reward("math-answer")], ...)`."""
    return TrlReward(reward, **kwargs)


class VerlScorer:
    """verl's custom reward function, with a table from `data_source` to what scores it.

    `table` maps each data source to a reward name, or to a dict `{"reward": name, "options": {...}}` or
    `{"task": name, "taskOptions": {...}}`, optionally with `"gold_field": "answer"` to send the ground truth as
    `{"answer": ground_truth}` (the built-in maths tasks' gold shape). `default` scores unlisted data sources (else
    they raise KeyError). verl needs a float for every sample: an unscorable one gets `unscorable` (0.0 by default)
    and is counted in `self.unscorable`, never silently (see also `self.scored`).
    """

    def __init__(self, table, client=None, default=None, unscorable=0.0, url=None, token=None):
        self.table = {k: self._entry(v) for k, v in dict(table).items()}
        self.default = None if default is None else self._entry(default)
        self.client = client or RewardClient(url=url, token=token)
        self.unscorable_value = unscorable
        self.scored = 0
        self.unscorable = 0

    @staticmethod
    def _entry(v):
        if isinstance(v, str):
            return {"target": {"reward": v}, "gold_field": None}
        v = dict(v)
        gold_field = v.pop("gold_field", None)
        opts = v.pop("options", None) if "reward" in v else v.pop("taskOptions", None)
        target = _target(v.pop("reward", None), v.pop("task", None), opts)
        if v:
            raise ValueError(f"unknown keys in a verl table entry: {sorted(v)}")
        return {"target": target, "gold_field": gold_field}

    def _item(self, data_source, solution_str, ground_truth):
        entry = self.table.get(data_source, self.default)
        if entry is None:
            raise KeyError(f"no rlvr reward for data_source {data_source!r}; table: {sorted(self.table)}")
        gold = {entry["gold_field"]: ground_truth} if entry["gold_field"] else ground_truth
        return {**entry["target"], "completion": solution_str, "example": {"gold": gold}}

    def batch(self, data_sources, solution_strs, ground_truths, extra_infos=None, **_):
        """verl's batch reward manager signature: one float per sample, scored in as few requests as batching allows."""
        items = [self._item(d, s, g) for d, s, g in zip(data_sources, solution_strs, ground_truths)]
        out = []
        for s in self.client.scores(items):
            if s is None:
                self.unscorable += 1
                out.append(float(self.unscorable_value))
            else:
                self.scored += 1
                out.append(float(s))
        return out

    def __call__(self, data_source, solution_str, ground_truth, extra_info=None, **_):
        """verl's `compute_score(data_source, solution_str, ground_truth, extra_info)`: one float."""
        return self.batch([data_source], [solution_str], [ground_truth])[0]


_SCORERS = {}


def _scorer(rewards, url, token, default, unscorable):
    if not rewards and default is None:
        raise ValueError("compute_score needs reward_kwargs.rewards: a table from data_source to an rlvr reward")
    key = json.dumps([rewards, url, token, default, unscorable], sort_keys=True, default=str)
    if key not in _SCORERS:  # one client per configuration and process (verl calls this per sample)
        _SCORERS[key] = VerlScorer(rewards or {}, default=default, unscorable=unscorable, url=url, token=token)
    return _SCORERS[key]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, rewards=None, url=None, token=None,
                  default=None, unscorable=0.0, **_):
    """verl `custom_reward_function` entry (name: compute_score); its `reward_kwargs` give `rewards` (the table of
    `VerlScorer`), and optionally `url`, `token`, `default` and `unscorable`."""
    return _scorer(rewards, url, token, default, unscorable)(data_source, solution_str, ground_truth, extra_info)


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, rewards=None, url=None,
                        token=None, default=None, unscorable=0.0, **_):
    """verl batch reward manager entry (`reward_model.reward_manager=batch`, name: compute_score_batch)."""
    return _scorer(rewards, url, token, default, unscorable).batch(data_sources, solution_strs, ground_truths)
