"""``ping`` output (iputils, busybox, BSD/macOS), with or without the summary.

::

    PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.
    64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.07 ms
    64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=1.06 ms

    --- 10.0.0.2 ping statistics ---
    2 packets transmitted, 2 received, 0% packet loss, time 1001ms
    rtt min/avg/max/mdev = 1.060/1.065/1.070/0.005 ms

busybox prints ``round-trip min/avg/max = 0.042/0.089/0.177 ms``. Pastes often stop
after the replies; then min/avg/max come from the replies, and the average is rounded
half-up to 2 decimals (the precision iputils prints per reply), so replies of
1.07, 1.06, 1.06, 1.06, 1.07, 1.07, 1.07 ms give ``rtt_avg_ms == 1.07``.

Pastes also drop the ``PING`` line: replies alone (RT-Thread's ``msh />`` ping prints
``60 bytes from 192.168.10.12 icmp_seq=0 ttl=64 time=5 ms`` and nothing else), or only
the statistics, whose ``--- 192.168.128.73 ping statistics ---`` line names the peer.
Windows ping is read in English, Chinese and Japanese::

    Reply from 192.168.1.14: bytes=32 time=21ms TTL=64
    来自 10.68.55.1 的回复: 字节=32 时间=5ms TTL=64
    192.168.1.13 からの応答: バイト数 =32 時間 =100ms TTL=128
    Minimum = 21ms, Maximum = 142ms, Average = 60ms

``address`` is the numeric address the replies came from (``PING host.1.jsdig.com
(100.42.212.8)``), so a name resolving to a public address is known to be one.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import ROUND_HALF_UP, Decimal

from collectors.facts import ParseError, PingResult
from collectors.numbers import finite
from collectors.parsers import register

_HEADER = re.compile(r"^PING\s+(?P<target>\S+)(?:\s+\((?P<address>[0-9A-Fa-f:.]+)\))?")
# Windows: "Pinging 10.0.0.2 with 32 bytes of data:", "正在 Ping 10.0.0.2 具有 32 字节的数据:",
# "10.0.0.2 に ping を送信しています 32 バイトのデータ:"
_WIN_HEADER = re.compile(
    r"^(?:Pinging\s+(?P<en>\S+)|正在\s*Ping\s+(?P<zh>\S+)|(?P<ja>\S+)\s*に\s*ping\s*を送信しています)", re.I
)
_STATS_HEADER = re.compile(r"^-{2,}\s*(?P<target>\S+?)\s+(?:PYTHON\s+)?PING\s+statistics\s*-{2,}", re.I)
# Windows: "Ping statistics for 10.0.0.2:", "10.0.0.2 的 Ping 统计信息:", "10.0.0.2 の ping 統計:"
_WIN_STATS_HEADER = re.compile(
    r"^(?:Ping statistics for\s+(?P<en>[^\s:]+)|(?P<zh>\S+)\s*的\s*Ping\s*统计信息"
    r"|(?P<ja>\S+)\s*の\s*ping\s*統計)\s*[:：]",
    re.I,
)
# Windows' counts: "Packets: Sent = 4, Received = 4, Lost = 0 (0% loss),", "数据包: 已发送 = 4，
# 已接收 = 4，丢失 = 0 (0% 丢失)，", "パケット数: 送信 = 4、受信 = 4、損失 = 0 (0% の損失)、"
_WIN_COUNTS = re.compile(
    r"(?:Sent|已发送|送信)\s*=\s*(?P<tx>\d+)\s*[,，、]\s*(?:Received|已接收|受信)\s*=\s*(?P<rx>\d+)"
    r"\s*[,，、]\s*(?:Lost|丢失|損失)\s*=\s*\d+\s*\((?P<loss>\d+(?:\.\d+)?)%",
    re.I,
)
_REPLY = re.compile(r"\bbytes from\b.*?\btime\s*(?P<op>[=<])\s*(?P<ms>\d+(?:\.\d+)?)\s*ms\b")
_REPLY_FROM = re.compile(r"\bbytes from\s+(?P<first>\S+)(?:\s+\((?P<paren>[0-9A-Fa-f:.]+)\))?")
_WIN_REPLY = re.compile(
    r"^(?:Reply from\s+(?P<en>[0-9A-Fa-f:.]+)|来自\s*(?P<zh>[0-9A-Fa-f:.]+)\s*的回复|"
    r"(?P<ja>[0-9A-Fa-f:.]+)\s*からの応答)\s*[:：].*?(?:time|时间|時間)\s*(?P<op>[=<])\s*"
    r"(?P<ms>\d+(?:\.\d+)?)\s*ms",
    re.I,
)
_WIN_SUMMARY = re.compile(
    r"(?:Minimum|最短|最小)\s*=\s*(?P<min>\d+(?:\.\d+)?)\s*ms\s*[,，、]\s*(?:Maximum|最长|最大)\s*=\s*"
    r"(?P<max>\d+(?:\.\d+)?)\s*ms\s*[,，、]\s*(?:Average|平均)\s*=\s*(?P<avg>\d+(?:\.\d+)?)\s*ms",
    re.I,
)
_TRANSMIT = re.compile(
    r"(?P<tx>\d+)\s+packets transmitted,\s*(?P<rx>\d+)\s+(?:packets\s+)?received"
    r"(?:,\s*\+\d+\s+\w+)*(?:,\s*(?P<loss>\d+(?:\.\d+)?)%\s+packet loss)?"
)
_SUMMARY = re.compile(
    r"^(?:rtt|round-trip)(?:\s+\(ms\))?\s+min/avg/max(?:/(?:mdev|stddev))?\s*=\s*"
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?:/(?P<mdev>[\d.]+))?\s*(?:ms)?"
)


def _numeric(text: str | None) -> str | None:
    """``text`` when it is an IP address, else None."""
    try:
        return str(ipaddress.ip_address((text or "").strip("()[]:").split("%")[0]))
    except ValueError:
        return None


def _reply_address(line: str) -> str | None:
    if m := _REPLY_FROM.search(line):
        return _numeric(m.group("paren")) or _numeric(m.group("first").rstrip(":"))
    return None


def _looks_like_ping(head: str) -> bool:
    """A ping output, with or without its command and ``PING`` line: two replies, or a
    statistics block, are enough."""
    if re.search(r"^PING\s+\S+", head, re.M) and re.search(r"bytes from|packets transmitted", head):
        return True
    replies = sum(1 for line in head.splitlines() if _REPLY.search(line) or _WIN_REPLY.search(line.strip()))
    return replies >= 2 or _has_statistics(head)


def _has_statistics(head: str) -> bool:
    """Whether ``head`` holds the ``--- X ping statistics ---`` block with its counts or RTTs,
    or Windows' ``Ping statistics for X:`` with its counts.

    >>> _has_statistics("Ping statistics for h:\\nPackets: Sent = 5, Received = 4, Lost = 1 (20% loss),")
    True
    """
    if re.search(r"^\s*-{2,}\s*\S+\s+(?:PYTHON\s+)?PING\s+statistics", head, re.M | re.I):
        return bool(re.search(r"packets transmitted|min/avg/max", head))
    lines = head.splitlines()
    return any(_WIN_STATS_HEADER.match(line.strip()) for line in lines) and any(
        _WIN_COUNTS.search(line) for line in lines
    )


def _round2(value: float) -> float:
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


@register(
    "ping",
    commands=(r"^ping6?\b",),
    detect=_looks_like_ping,
    needles=("bytes from", "packets transmitted", "min/avg/max", ":", "："),
    priority=10,
    # Windows' label above its Minimum/Maximum/Average line (English, Chinese,
    # Japanese): it reads like a sentence, and would end the output before it
    prose_lines=(
        r"Approximate round trip times in milli-?seconds:",
        r"往返行程的估计时间\(以毫秒为单位\)[:：]",
        r"ラウンド ?トリップの概算時間 ?\(ミリ秒\)[:：]",
    ),
)
def parse_ping(text: str) -> PingResult:
    """Target, packet counts, loss and RTT statistics in milliseconds.

    >>> r = parse_ping("64 bytes from h: time=1.07 ms\\n64 bytes from h: time=1.06 ms")
    >>> (r.received, r.rtt_avg_ms, r.rtt_min_ms, r.rtt_max_ms)
    (2, 1.07, 1.06, 1.07)
    """
    out = PingResult()
    summary = False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not summary and _read_header(out, line, number):
            continue
        summary = _read_line(out, line, number) or summary
    if not summary:
        _without_summary(out)
    return out


def _without_summary(out: PingResult) -> None:
    """A ping without its summary line: the RTTs of its replies; ParseError when
    it has neither replies nor packet counts."""
    if out.replies_ms:
        _rtt_from_replies(out)
    elif out.transmitted is None:
        raise ParseError("no ping replies or statistics")


def _rtt_from_replies(out: PingResult) -> None:
    """Without the summary line (a paste cut before it): min/avg/max of the replies."""
    out.rtt_min_ms = min(out.replies_ms)
    out.rtt_max_ms = max(out.replies_ms)
    out.rtt_avg_ms = _round2(sum(out.replies_ms) / len(out.replies_ms))
    out.lines["rtt_avg_ms"] = out.lines["replies_ms"]
    if out.received is None:
        out.received = len(out.replies_ms)


def _read_line(out: PingResult, line: str, number: int) -> bool:
    """A reply, the packet counts or the min/avg/max summary; True for the summary."""
    if m := _REPLY.search(line) or _WIN_REPLY.search(line):
        _read_reply(out, m, line, number)
    elif m := _TRANSMIT.search(line) or _WIN_COUNTS.search(line):
        _read_counts(out, m, number)
    elif m := _SUMMARY.match(line) or _WIN_SUMMARY.search(line):
        _read_summary(out, m, number)
        return True
    return False


def _read_counts(out: PingResult, m: re.Match[str], number: int) -> None:
    """``N packets transmitted, M received, L% packet loss``."""
    out.transmitted, out.received = int(m.group("tx")), int(m.group("rx"))
    if m.group("loss") is not None:
        out.loss_pct = finite(m.group("loss"), number)
    out.lines["transmitted"] = out.lines["loss_pct"] = number


def _read_reply(out: PingResult, m: re.Match[str], line: str, number: int) -> None:
    """``64 bytes from h (10.0.0.1): ... time=1.07 ms``: its time, and the first
    address a reply names."""
    out.replies_ms.append(finite(m.group("ms"), number))
    if m.group("op") == "<":  # Windows' "time<1ms": below its resolution, a bound
        out.replies_below_ms.append(out.replies_ms[-1])
    out.lines.setdefault("replies_ms", number)
    address = _reply_address(line) or _numeric(_group(m, "en", "zh", "ja"))
    if address and out.address is None:
        out.address = address
        out.target = out.target or address


def _read_summary(out: PingResult, m: re.Match[str], number: int) -> None:
    """``rtt min/avg/max/mdev = ...`` (Windows: ``Minimum = ..., Maximum = ...``)."""
    out.rtt_min_ms = finite(m.group("min"), number)
    out.replies_below_ms.clear()  # the tool's own statistics decide, not the replies
    out.rtt_avg_ms = finite(m.group("avg"), number)
    out.rtt_max_ms = finite(m.group("max"), number)
    if m.groupdict().get("mdev"):
        out.rtt_mdev_ms = finite(m.group("mdev"), number)
    out.lines["rtt_avg_ms"] = number


def _group(m: re.Match[str], *names: str) -> str | None:
    groups = m.groupdict()
    return next((groups[n] for n in names if groups.get(n)), None)


def _read_header(out: PingResult, line: str, number: int) -> bool:
    """The ``PING`` line, Windows' ``Pinging ...`` or the ``--- X ping statistics ---``
    line: the first one names the target."""
    m = _HEADER.match(line) or _WIN_HEADER.match(line)
    m = m or _STATS_HEADER.match(line) or _WIN_STATS_HEADER.match(line)
    if not m:
        return False
    target = _group(m, "target", "en", "zh", "ja")  # each header names it in one of these
    if _target_open(out):
        out.target = target
        out.lines["target"] = number
    address = _numeric(m.groupdict().get("address")) or _numeric(target)
    if address and out.address is None:
        out.address = address
    return True


def _target_open(out: PingResult) -> bool:
    """Whether a header may still name the target: none is known, or only one
    taken from a line that is no reply."""
    return out.target is None or (out.lines.get("target") is None and not out.replies_ms)


# "for h in a b c; do echo -n "$h "; ping -qc 100 $h | tail -1; done" and mesh scripts
# print one labelled summary per peer: "crdb1a to 1d rtt min/avg/max/mdev = ... ms, pipe 2"
_LABELLED_SUMMARY = re.compile(
    r"^(?P<label>\S[^\n]*?):?[ \t]+(?:rtt|round-trip)[ \t]+min/avg/max(?:/(?:mdev|stddev))?\s*=\s*"
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?:/(?P<mdev>[\d.]+))?\s*ms",
    re.M,
)
_FROM_TO = re.compile(r"^(?P<source>\S+)\s+to\s+(?P<target>\S+)$")
# the start of a labelled summary line: "crdb2a to 1" (cut), "crdb2a to 1d rtt min/av"
_FROM_TO_START = re.compile(r"^(?P<source>\S+)\s+to\s+\S")


@register(
    "ping_summaries",
    detect=lambda head: bool("min/avg/max" in head and _LABELLED_SUMMARY.search(head)),
    priority=10,
)
def parse_ping_summaries(text: str) -> list[PingResult]:
    """One result per labelled summary line; the peer is the label's last word
    (``<source> to <peer>`` names the peer after ``to`` and the host the ping ran
    on before it, kept as ``from_host``). A ``<source> to ...`` line of a source seen
    before that holds no summary (a paste cut mid-line) is reported, and the
    results read are kept.

    >>> [(r.from_host, r.target, r.rtt_avg_ms) for r in parse_ping_summaries(
    ...     "crdb1a to 1d rtt min/avg/max/mdev = 46.212/46.958/53.371/1.129 ms, pipe 2\\n"
    ...     "db2: rtt min/avg/max/mdev = 0.048/0.076/0.138/0.016 ms")]
    [('crdb1a', '1d', 46.958), (None, 'db2', 0.076)]
    """
    out: list[PingResult] = []
    sources: set[str] = set()
    cut: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _LABELLED_SUMMARY.match(line.strip())
        if not m:
            # the script's own lines ("Processing crdb1a"), ssh's goodbyes; a
            # "<source> to <peer>" line without its summary was cut
            if _is_cut_summary(line, sources):
                cut.append((number, line.strip()))
            continue
        result = _labelled_result(m, number)
        if result.from_host:
            sources.add(result.from_host)
        result.lines["target"] = result.lines["rtt_avg_ms"] = number
        out.append(result)
    if not out:
        raise ParseError("no '<peer> rtt min/avg/max = ...' lines")
    _check_cut(cut, out)
    return out


def _is_cut_summary(line: str, sources: set[str]) -> bool:
    """A ``<source> to ...`` line without its figures, of a source seen before or
    cut inside them."""
    start = _FROM_TO_START.match(line.strip())
    return bool(start and (start.group("source") in sources or "rtt" in line or "min/" in line))


def _labelled_result(m: re.Match[str], number: int) -> PingResult:
    """One labelled summary: the peer is the label's last word, or what follows
    ``to`` in ``<source> to <peer>``."""
    label = m.group("label").strip()
    peer = _FROM_TO.match(label)
    return PingResult(
        target=peer.group("target") if peer else label.split()[-1].rstrip(":"),
        from_host=peer.group("source") if peer else None,
        rtt_min_ms=finite(m.group("min"), number),
        rtt_avg_ms=finite(m.group("avg"), number),
        rtt_max_ms=finite(m.group("max"), number),
        rtt_mdev_ms=finite(m.group("mdev"), number) if m.group("mdev") else None,
    )


def _check_cut(cut: list[tuple[int, str]], out: list[PingResult]) -> None:
    """ParseError (keeping the results read) when a summary line was cut."""
    if cut:
        number, line = cut[0]
        more = f" (and {len(cut) - 1} more)" if len(cut) > 1 else ""
        raise ParseError(
            f"ping summary cut: {line[:80]!r} holds no rtt figures{more}", line=number, partial=out
        )
