"""A synthetic training curriculum for the maya-fbp-16 domains (the g-index baselines' data).

The benchmark publishes only its 32 test programs, so a baseline needs training data of its
own. This module writes one: for each of the sixteen task domains, ``per_domain`` samples
``{"prompt", "program"}`` — a task in English (our own phrasings, random words from
:data:`WORDS`) and a Node-RED flow that does it, built from **core Node-RED nodes and the
well-known public node packages** (``node-red-dashboard``, ``node-red-node-email``,
``node-red-contrib-telegrambot``), written from their documentation. Nothing is read from the
benchmark's reference programs: they are the test set, and a curriculum made from them would
leak the answers (the ``program-leak`` check refuses such answers; see docs/gindex.md).

The flows do what the prompts say, the way a Node-RED user would write them; they are not
shaped after the reference programs (which use the authors' own nodes), so the baselines'
divergences measure how far ordinary Node-RED is from the benchmark's programs.
Deterministic: the same ``seed`` gives byte-identical files.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Our word list for names, messages and search terms (common English words).
WORDS = (
    "amber anchor apple arrow autumn badge bakery bamboo banner basket beacon berry bicycle "
    "blanket blossom border bottle breeze bridge bucket button cabin camera candle canyon "
    "carpet castle cedar chalk cherry circle cliff clock cloud cobalt comet copper coral "
    "cotton crystal dawn desert diamond dolphin dragon drum eagle echo ember engine falcon "
    "feather fern field flame forest fossil fountain galaxy garden garlic glacier globe "
    "granite harbor harvest hazel helmet honey horizon island ivory jacket jasmine jungle "
    "kettle kite ladder lagoon lantern lemon library lighthouse lily linen magnet maple "
    "marble meadow melody mirror moss mountain needle nest noodle oasis ocean olive orbit "
    "orchard paddle palace paper pebble pepper piano pillow planet pocket pond poppy prism "
    "puzzle quartz quill rabbit radar raven ribbon river rocket saddle salmon sandal satellite "
    "season shadow shell silver sketch sparrow spice spiral spring stone summit sunset "
    "teapot thunder timber tulip tunnel umbrella valley velvet violet voyage walnut whistle "
    "willow window winter wizard yarrow zephyr"
).split()

DOMAINS = (
    "cron-reminder", "cron-schedule", "facebook", "gmail-send", "google-search",
    "googlesearch-to-csv", "http", "telegram-2-reply", "telegram-3-reply", "template-form",
    "template-slider", "twitter", "url-skill", "youtube-pause", "youtube-play",
    "youtube-resume",
)  # fmt: skip

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class _Flow:
    """A flow under construction: nodes with fresh ids, wired left to right."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[dict[str, Any]] = []

    def node(self, type_: str, **attrs: Any) -> dict[str, Any]:
        n = {"id": f"{self.rng.getrandbits(32):08x}.{self.rng.getrandbits(20):05x}",
             "type": type_, "x": 120 + 180 * len(self.nodes), "y": 80 + 40 * self.rng.randrange(4),
             "wires": [[]], **attrs}  # fmt: skip
        self.nodes.append(n)
        return n

    def config(self, type_: str, **attrs: Any) -> dict[str, Any]:
        """A configuration node (no position, no wires)."""
        n = {"id": f"{self.rng.getrandbits(32):08x}.{self.rng.getrandbits(20):05x}",
             "type": type_, **attrs}  # fmt: skip
        self.nodes.append(n)
        return n

    def chain(self, *nodes: dict[str, Any]) -> None:
        for a, b in itertools.pairwise(nodes):
            a["wires"][0].append(b["id"])


def _words(rng: random.Random, lo: int = 1, hi: int = 4) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def _cron(rng: random.Random) -> tuple[str, str]:
    """A cron expression and its English description."""
    minute, hour = rng.randrange(60), rng.randrange(24)
    days = sorted(rng.sample(range(7), rng.randint(1, 3)))
    names = ", ".join(DAYS[(d + 6) % 7] for d in days)
    expr = f"{minute} {hour} * * {','.join(str(d) for d in days)}"
    return expr, f"at {hour:02d}:{minute:02d} on {names}"


def _cron_reminder(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    text = _words(rng, 2, 4)
    expr, when = _cron(rng)
    f = _Flow(rng)
    a = f.node("inject", name="", props=[{"p": "payload"}], repeat="", crontab=expr,
               once=False, topic="reminder", payload=text, payloadType="str")
    b = f.node("template", name="reminder text", field="payload", fieldType="msg",
               format="handlebars", syntax="mustache", template="Reminder: {{payload}}",
               output="str")
    c = f.node("debug", name="notify", active=True, tosidebar=True, console=False,
               complete="payload", targetType="msg")
    f.chain(a, b, c)
    phrase = rng.choice(["Remind me to '{t}' {w}", "Set a reminder '{t}' {w}",
                         "Every week {w}, remind me: '{t}'"])
    return phrase.format(t=text, w=when), f.nodes


def _cron_schedule(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    expr, when = _cron(rng)
    f = _Flow(rng)
    a = f.node("inject", name="", props=[{"p": "payload"}, {"p": "topic", "vt": "str"}],
               repeat="", crontab=expr, once=False, topic="", payload="", payloadType="date")
    b = f.node("debug", name="", active=True, tosidebar=True, console=False,
               complete="false", targetType="full")
    f.chain(a, b)
    phrase = rng.choice(["Run a job {w}", "Trigger a flow {w}", "Repeat {w}"])
    return phrase.format(w=when), f.nodes


def _facebook(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    pairs = [(_words(rng, 1, 3), _words(rng, 1, 4)) for _ in range(2)]
    f = _Flow(rng)
    a = f.node("http in", name="messenger webhook", url="/facebook/webhook", method="post",
               upload=False, swaggerDoc="")
    rules = "; ".join(f"if (text === {q!r}) reply = {r!r};" for q, r in pairs)
    b = f.node("function", name="reply", outputs=1, noerr=0, initialize="", finalize="",
               libs=[], func="const text = msg.payload.entry[0].messaging[0].message.text;\n"
               f"let reply = null; {rules}\nmsg.payload = {{ message: {{ text: reply }} }};\n"
               "return reply ? msg : null;")
    c = f.node("http request", name="send API", method="POST", ret="obj", paytoqs="ignore",
               url="https://graph.facebook.com/v12.0/me/messages", tls="", persist=False,
               proxy="", authType="bearer", senderr=False)
    d = f.node("http response", name="", statusCode="200", headers={})
    f.chain(a, b, c)
    a["wires"][0].append(d["id"])
    (q1, r1), (q2, r2) = pairs
    prompt = rng.choice([
        f"On Facebook Messenger answer '{q1}' with '{r1}' and '{q2}' with '{r2}'",
        f"Make a Facebook bot that replies '{r1}' to '{q1}' and '{r2}' to '{q2}'",
    ])  # fmt: skip
    return prompt, f.nodes


def _mail(rng: random.Random) -> tuple[str, str, str]:
    user = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    return _words(rng, 1, 4), _words(rng, 1, 4), f"{user}@example.org"


def _gmail_send(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    body, subject, to = _mail(rng)
    f = _Flow(rng)
    a = f.node("inject", name="", props=[{"p": "payload"}], repeat="", crontab="", once=False,
               topic="", payload="", payloadType="date")
    b = f.node("change", name="compose", rules=[
        {"t": "set", "p": "payload", "pt": "msg", "to": body, "tot": "str"},
        {"t": "set", "p": "topic", "pt": "msg", "to": subject, "tot": "str"},
        {"t": "set", "p": "to", "pt": "msg", "to": to, "tot": "str"},
    ], action="", property="", **{"from": ""}, to="", reg=False)  # fmt: skip
    c = f.node("e-mail", name="gmail", server="smtp.gmail.com", port="465", secure=True,
               tls=True, authtype="BASIC", dname="", wires=[])
    f.chain(a, b, c)
    prompt = rng.choice([f"Email {to} with subject '{subject}' saying '{body}'",
                         f"Send a Gmail message '{body}' titled '{subject}' to {to}"])
    return prompt, f.nodes


def _search_nodes(f: _Flow, query: str) -> list[dict[str, Any]]:
    a = f.node("inject", name="", props=[{"p": "payload"}], repeat="", crontab="", once=False,
               topic="", payload=query, payloadType="str")
    b = f.node("change", name="search url", rules=[
        {"t": "set", "p": "url", "pt": "msg", "tot": "jsonata",
         "to": "'https://www.google.com/search?q=' & $encodeUrl(payload)"}],
        action="", property="", **{"from": ""}, to="", reg=False)  # fmt: skip
    c = f.node("http request", name="", method="GET", ret="txt", paytoqs="ignore", url="",
               tls="", persist=False, proxy="", authType="", senderr=False)
    d = f.node("html", name="result titles", property="payload", outproperty="payload",
               tag="h3", ret="text", **{"as": "single"})
    f.chain(a, b, c, d)
    return [a, b, c, d]


def _google_search(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    query = _words(rng, 1, 4)
    f = _Flow(rng)
    *_, d = _search_nodes(f, query)
    e = f.node("debug", name="results", active=True, tosidebar=True, console=False,
               complete="payload", targetType="msg")
    f.chain(d, e)
    prompt = rng.choice([f"Google {query} and list the result titles",
                         f"Look up {query} on Google and collect the results"])
    return prompt, f.nodes


def _googlesearch_to_csv(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    query = _words(rng, 1, 4)
    name = "-".join(rng.choice(WORDS) for _ in range(2)) + ".csv"
    f = _Flow(rng)
    *_, d = _search_nodes(f, query)
    e = f.node("csv", name="", sep=",", hdrin="", hdrout="none", multi="one", ret="\\n",
               temp="payload", skip="0", strings=True)
    g = f.node("file", name="", filename=name, filenameType="str", appendNewline=True,
               createDir=False, overwriteFile="false", encoding="none")
    f.chain(d, e, g)
    prompt = rng.choice([f"Google {query} and save the result titles in {name}",
                         f"Write the Google results for {query} to the file {name}"])
    return prompt, f.nodes


def _http(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    method = rng.choice(["get", "post", "put", "delete", "patch"])
    path = "-".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    f = _Flow(rng)
    a = f.node("http in", name="", url=f"/{path}", method=method, upload=False, swaggerDoc="")
    b = f.node("template", name="page", field="payload", fieldType="msg", format="html",
               syntax="mustache", template=f"<h1>{path}</h1>", output="str")
    c = f.node("http response", name="", statusCode="", headers={})
    f.chain(a, b, c)
    prompt = rng.choice([f"Serve an HTTP {method.upper()} route /{path}",
                         f"Make a web endpoint {path} answering {method.upper()} requests"])
    return prompt, f.nodes


def _telegram(rng: random.Random, k: int) -> tuple[str, list[dict[str, Any]]]:
    pairs = [(_words(rng, 1, 3), _words(rng, 1, 4)) for _ in range(k)]
    f = _Flow(rng)
    bot = f.config("telegram bot", botname=f"{rng.choice(WORDS)}_bot", usernames="",
                   chatids="", updatemode="polling", pollinterval="300")
    a = f.node("telegram receiver", name="", bot=bot["id"], saveDataDir="", filterCommands=False,
               wires=[[], []])
    b = f.node("switch", name="which text", property="payload.content", propertyType="msg",
               rules=[{"t": "eq", "v": q, "vt": "str"} for q, _ in pairs], checkall="false",
               repair=False, outputs=k, wires=[[] for _ in pairs])
    c = f.node("telegram sender", name="", bot=bot["id"], haserroroutput=False, outputs=1)
    a["wires"][0].append(b["id"])
    for j, (_, r) in enumerate(pairs):
        m = f.node("change", name="", rules=[
            {"t": "set", "p": "payload.content", "pt": "msg", "to": r, "tot": "str"},
            {"t": "set", "p": "payload.type", "pt": "msg", "to": "message", "tot": "str"}],
            action="", property="", **{"from": ""}, to="", reg=False)  # fmt: skip
        b["wires"][j].append(m["id"])
        m["wires"][0].append(c["id"])
    said = ", ".join(f"'{q}' gets '{r}'" for q, r in pairs)
    prompt = rng.choice([f"Telegram bot: {said}", f"Answer on Telegram: {said}"])
    return prompt, f.nodes


def _ui(f: _Flow) -> tuple[dict[str, Any], dict[str, Any]]:
    tab = f.config("ui_tab", name="Home", icon="dashboard", disabled=False, hidden=False)
    group = f.config("ui_group", name="Default", tab=tab["id"], order=1, disp=True, width="6",
                     collapse=False)
    return tab, group


def _template_form(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    fields = rng.sample(WORDS, rng.randint(2, 6))
    f = _Flow(rng)
    _, group = _ui(f)
    a = f.node("ui_form", name="", label="", group=group["id"], order=1, width=0, height=0,
               options=[{"label": w, "value": w, "type": rng.choice(["text", "number"]),
                         "required": True, "rows": None} for w in fields],
               formValue={w: "" for w in fields}, payload="", submit="submit",
               cancel="cancel", topic="topic", topicType="msg", splitLayout="")
    b = f.node("debug", name="", active=True, tosidebar=True, console=False,
               complete="payload", targetType="msg")
    f.chain(a, b)
    prompt = rng.choice(["A dashboard form asking for " + ", ".join(fields),
                         "Build a form with fields " + " and ".join(fields)])
    return prompt, f.nodes


def _template_slider(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    k = rng.randint(1, 5)
    lo = rng.randrange(-100, 50, 5)
    hi = lo + rng.randrange(10, 100, 5)
    step = rng.choice([1, 2, 5, 10])
    f = _Flow(rng)
    _, group = _ui(f)
    out = f.node("debug", name="", active=True, tosidebar=True, console=False,
                 complete="payload", targetType="msg")
    for j in range(k):
        s = f.node("ui_slider", name="", label=f"slider {j + 1}", tooltip="", group=group["id"],
                   order=j + 1, width=0, height=0, passthru=True, outs="end", topic="topic",
                   topicType="msg", min=str(lo), max=str(hi), step=str(step))
        s["wires"][0].append(out["id"])
    prompt = rng.choice([f"Dashboard with {k} slider(s) from {lo} to {hi}, step {step}",
                         f"Add {k} sliders between {lo} and {hi} moving by {step}"])
    return prompt, f.nodes


def _twitter(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    tag = rng.choice(WORDS)
    f = _Flow(rng)
    a = f.node("twitter in", name="", twitter="", tags=f"#{tag}", user="false", inputs=0)
    b = f.node("debug", name="tweets", active=True, tosidebar=True, console=False,
               complete="payload", targetType="msg")
    f.chain(a, b)
    prompt = rng.choice([f"Follow tweets tagged #{tag}", f"Stream Twitter posts about #{tag}"])
    return prompt, f.nodes


def _url_skill(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    name = _words(rng, 1, 3)
    url = f"https://{'-'.join(rng.choice(WORDS) for _ in range(2))}.example.com"
    f = _Flow(rng)
    a = f.node("http in", name=name, url="/skill/" + name.replace(" ", "-"), method="get",
               upload=False, swaggerDoc="")
    b = f.node("exec", name="open url", command=f"xdg-open {url}", addpay="", append="",
               useSpawn="false", timer="", winHide=False, oldrc=False, wires=[[], [], []])
    c = f.node("http response", name="", statusCode="204", headers={})
    f.chain(a, b)
    a["wires"][0].append(c["id"])
    prompt = rng.choice([f"A command '{name}' that opens {url}",
                         f"When I say '{name}', open the page {url}"])
    return prompt, f.nodes


def _youtube_key(rng: random.Random, key: str, what: str) -> tuple[str, list[dict[str, Any]]]:
    f = _Flow(rng)
    a = f.node("inject", name=what, props=[{"p": "payload"}], repeat="", crontab="",
               once=False, topic="", payload="", payloadType="date")
    b = f.node("exec", name=f"{what} video", command=f"xdotool search --name YouTube key {key}",
               addpay="", append="", useSpawn="false", timer="5", winHide=False, oldrc=False,
               wires=[[], [], []])
    f.chain(a, b)
    prompt = rng.choice([f"{what.capitalize()} the YouTube video",
                         f"{what.capitalize()} playback on YouTube",
                         f"YouTube: {what} the video that is open"])
    return prompt, f.nodes


def _youtube_play(rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    query = _words(rng, 1, 4)
    f = _Flow(rng)
    a = f.node("inject", name="", props=[{"p": "payload"}], repeat="", crontab="", once=False,
               topic="", payload=query, payloadType="str")
    b = f.node("change", name="search url", rules=[
        {"t": "set", "p": "url", "pt": "msg", "tot": "jsonata",
         "to": "'https://www.youtube.com/results?search_query=' & $encodeUrl(payload)"}],
        action="", property="", **{"from": ""}, to="", reg=False)  # fmt: skip
    c = f.node("exec", name="open browser", command="xdg-open", addpay="url", append="",
               useSpawn="false", timer="", winHide=False, oldrc=False, wires=[[], [], []])
    f.chain(a, b, c)
    prompt = rng.choice([f"Play {query} on YouTube", f"Find the YouTube video {query} and play it"])
    return prompt, f.nodes


MAKERS: dict[str, Callable[[random.Random], tuple[str, list[dict[str, Any]]]]] = {
    "cron-reminder": _cron_reminder,
    "cron-schedule": _cron_schedule,
    "facebook": _facebook,
    "gmail-send": _gmail_send,
    "google-search": _google_search,
    "googlesearch-to-csv": _googlesearch_to_csv,
    "http": _http,
    "telegram-2-reply": lambda rng: _telegram(rng, 2),
    "telegram-3-reply": lambda rng: _telegram(rng, 3),
    "template-form": _template_form,
    "template-slider": _template_slider,
    "twitter": _twitter,
    "url-skill": _url_skill,
    "youtube-pause": lambda rng: _youtube_key(rng, "k", "pause"),
    "youtube-play": _youtube_play,
    "youtube-resume": lambda rng: _youtube_key(rng, "k", "resume"),
}


def curriculum(per_domain: int, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """Domain → ``per_domain`` samples ``{"prompt", "program"}`` (deterministic in ``seed``)."""
    if per_domain < 1:
        raise ValueError("per_domain must be >= 1")
    out: dict[str, list[dict[str, Any]]] = {}
    for k, domain in enumerate(DOMAINS):
        rng = random.Random(seed * 1000 + k)
        out[domain] = []
        for _ in range(per_domain):
            prompt, program = MAKERS[domain](rng)
            out[domain].append({"prompt": prompt, "program": program})
    return out


def write_curriculum(folder: Path, per_domain: int, seed: int = 0) -> Path:
    """Write ``folder/<domain>.jsonl`` and ``folder/curriculum.csv``; return the CSV's path."""
    folder.mkdir(parents=True, exist_ok=True)
    data = curriculum(per_domain, seed)
    rows = ["domain,num_samples"]
    for domain, samples in data.items():
        lines = [json.dumps(s, ensure_ascii=False, sort_keys=True) for s in samples]
        (folder / f"{domain}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows.append(f"{domain},{len(samples)}")
    csv = folder / "curriculum.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return csv


def read_curriculum(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """(domain, sample) of every ``folder/<domain>.jsonl``, in file then line order."""
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append((path.stem, json.loads(line)))
    return out
