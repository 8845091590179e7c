"""Outputs Casebook recognises but does not read: one table, :data:`CATALOGUE`.

A paste around a NUMA question often holds outputs no rule needs (``systemctl
status``, ``ip addr``, ``uptime``, a sysbench or fio result, an SQL result grid of
some other table). Left unrecognised they look like something the reader
missed; recognised here they are accounted as "output of X, not used" in the
host's ``reading`` (``unused_lines``, ``unused``), apart from what was read and
from what nothing recognised.

Each row names the output (``what``), the command lines that print it
(``command``, matched with ``re.search`` on the command without ``sudo``) and,
where the output has a shape of its own, a pattern that recognises it without a
prompt (``content``, ``re.search`` with ``re.M`` on the output's first lines).
A command or output that a parser reads is never looked up here: the catalogue
only names what no parser took.

>>> unused_command("systemctl status mariadb")
'systemctl'
>>> unused_output("  System load:  0.0               Processes:             132") is None
True
>>> unused_output("sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)")
'sysbench'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["CATALOGUE", "Unused", "other_system_output", "unused_command", "unused_output"]


@dataclass(frozen=True)
class Unused:
    what: str  # what the output is, as the reading names it
    command: str  # regex on the command line
    content: str | None = None  # regex (re.M) on the output's first lines
    # an output of a command a parser reads that the parser cannot read: printed by another
    # system (Solaris's vmstat) or in a form no parser takes (iostat's CPU report alone);
    # looked for by content when the output does not parse as the command's (readk)
    other_system: bool = False


# fmt: off
CATALOGUE: tuple[Unused, ...] = (
    # services, logs, the system
    Unused("systemctl", r"^systemctl(\s|$)",
           r"^\s*(?:●|\*|×|○)\s+[\w@.:-]+\.(?:service|socket|timer|mount|target|scope)\b.*\n\s+Loaded: "),
    Unused("service", r"^service\s+\S+\s+status\b"),
    Unused("journalctl", r"^journalctl(\s|$)", r"^-- (?:Logs begin at|Journal begins at|No entries) "),
    Unused("ip", r"^ip(\s+-\S+)*\s+(?:a|ad|addr|address|l|link|r|ro|route|n|neigh|rule|-s)\b",
           r"^\d+: [\w@.:-]+: <[A-Z_,-]*> mtu \d+|^default via [\d.:a-f]+ dev \S+.*\n[\d.]+/\d+ dev \S+"),
    Unused("ipconfig", r"^ipconfig(\s|$)", r"^Windows IP (?:Configuration|配置)\s*$"),
    Unused("traceroute", r"^(?:traceroute6?|tracert|tracepath|mtr)\s",
           r"^traceroute6? to \S+ \([\d.:a-f]+\), \d+ hops max"
           r"|^(?:Tracing route to|通过最多 \d+ 个跃点跟踪)"),
    Unused("nmcli", r"^(?:nmcli|connmanctl|iw|iwconfig)(\s|$)"),
    Unused("dstat", r"^dstat(\s|$)", r"^-{2,}system-{2,}|^-{2,}total-cpu-usage-{2,}"),
    # a JVM's own report of itself (SapMachine's Vitals: "jcmd <pid> VM.vitals"): its title,
    # a listing's line number maybe before it, or a line of its legend ("avail: Memory
    # available without swapping [host]")
    Unused("jcmd", r"^jcmd(\s|$)",
           r"^[ \t]{0,8}(?:\d{1,5}[ \t]{1,4})?Vitals:[ \t]*\n[ \t]{0,8}(?:\d{1,5}[ \t]{1,4})?-{6,}system-{6,}"
           r"|^[ \t]{2,16}[\w-]{1,16}: [A-Z][^\n\[]{0,80}\[(?:host|cgrp)\](?: \[delta\])?[ \t]*$"),
    # its totals, or its column header when a post shows the rows alone
    Unused("iotop", r"^iotop(\s|$)", r"^Total DISK READ\s*:.{0,60}\|\s*Total DISK WRITE\s*:"
           r"|^[ \t]*(?:TID|PID)[ \t]+PRIO[ \t]+USER[ \t]+DISK READ[ \t]+DISK WRITE[ \t]+SWAPIN"
           r"[ \t]+IO>?[ \t]+COMMAND"),
    Unused("ifconfig", r"^ifconfig(\s|$)", r"^[\w.:-]+: flags=\d+<[A-Z_,-]*>\s+mtu \d+"),
    Unused("uptime", r"^uptime(\s|$)", r"^\s*\d\d:\d\d:\d\d up .{0,60}load average: "),
    Unused("w", r"^w(\s|$)"),
    # lsb_release -a: "Distributor ID:", "Description:", "Release:", "Codename:" in this order
    Unused("lsb_release", r"^lsb_release(\s|$)",
           r"^(?:No LSB modules are available\.\n)?Distributor ID:[ \t]+\S[^\n]*\n"
           r"Description:[ \t]+\S[^\n]*\nRelease:[ \t]+\S+[ \t]*\n"),
    Unused("whoami",
           r"^(?:whoami|id|date|nproc|hostname|uname -[nrm]|arch|getenforce|sestatus)(\s|$)"),
    Unused("getconf", r"^getconf(\s|$)"),
    Unused("hostnamectl", r"^hostnamectl(\s|$)",
           r"^\s+Static hostname: .*\n(?:.*\n){0,4}\s+(?:Icon name|Chassis|Machine ID): "),
    Unused("os-release", r"^(?:cat|more|less)\s+/etc/(?:os-release|redhat-release|lsb-release|issue)\b",
           r'^NAME="[^"\n]{1,80}"\nVERSION="[^"\n]{0,80}"\n'),
    Unused("ls", r"^(?:ls|ll)(\s|$)", r"^total \d+\n[-dlcbps][rwxsStT-]{9}[.+@]?\s+\d+ "),
    # a section of pt-summary's report that no parser reads ("# Processor ####", "# Memory ####")
    Unused("pt-summary", r'^pt-summary section "'),
    Unused("lsblk", r"^lsblk(\s|$)", r"^NAME\s+MAJ:MIN\s+RM\s+SIZE\s+RO\s+TYPE"),
    # partition tables (pt-summary's "partitioning" file is fdisk -l's)
    Unused("fdisk", r"^(?:fdisk|sfdisk|parted|gdisk)\s",
           r"^Disk /dev/[\w/\-]{1,64}: [\d.,]+ [KMGTP]i?B, \d+ bytes"),
    # lscpu -e in JSON (lscpu -J, the summary, is read)
    Unused("lscpu -e JSON", r"^lscpu\s+(?:-\w*e\w*J|-\w*J\w*e|--extended\s+--json|--json\s+--extended)",
           r'^\{[ \t]*\n[ \t]*"cpus":[ \t]*\[[ \t]*\n[ \t]*\{[ \t]*"cpu":'),
    Unused("lsmod", r"^lsmod(\s|$)", r"^Module\s+Size\s+Used by\s*$"),
    Unused("mount", r"^mount(\s|$)"),
    # (and FreeBSD's listen queues, netstat -L: "tcp4  0/0/128  *.80", a socket's rows alone too)
    Unused("netstat", r"^(?:netstat|ss)(\s|$)", r"^(?:Netid|Proto)\s+(?:State\s+)?Recv-Q\s+Send-Q\s"
           r"|^Current listen queue sizes \(qlen/incqlen/maxqlen\)[ \t]*$"
           r"|^(?:tcp|udp|unix|sctp)[46]{0,2}[ \t]+\d{1,9}/\d{1,9}/\d{1,9}[ \t]+\S+[ \t]*$"),
    Unused("env", r"^(?:env|printenv|set|export)(\s|$)"),
    Unused("which", r"^(?:which|whereis|type|command -v)\s"),
    Unused("echo", r"^echo(\s|$)"),
    Unused("cd", r"^(?:cd|pwd|clear|history|exit|logout)(\s|$)"),
    Unused("file management", r"^(?:rm|cp|mv|mkdir|chmod|chown|touch|ln|fallocate|truncate)\s"),
    Unused("editor", r"^(?:vi|vim|nano|emacs)\s"),
    Unused("package manager", r"^(?:yum|dnf|apt|apt-get|rpm|dpkg|pip3?|zypper)\s"),
    Unused("docker", r"^(?:docker|podman)(?:\s+\S+)?\s+(?:ps|images|stats|inspect|logs|info|version)\b",
           r"^CONTAINER ID\s+(?:IMAGE|NAME)\s"
           r"|^Client:[^\n]{0,40}\n[ \t]+(?:Version:[ \t]+\S+\n[ \t]+API version:|Context:|Debug Mode)"
           r"|^Containers: \d+\n[ \t]+Running: \d+"
           # "docker --version" and its tools' ("docker-machine version 0.4.1 (e2c88d6)")
           r"|^(?:Docker|docker-machine|Boot2Docker|docker-compose|Docker Compose) version "
           r"v?\d+\.\d+[\w.-]*,? (?:build [0-9a-f]{6,40}|\([0-9a-f]{6,40}\))"),
    Unused("kubectl", r"^(?:kubectl|oc)\s+(?:get|describe|top|logs|version)\b",
           r"^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b|^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\b"),
    # (and its topology matrix, nvidia-smi topo -m: "GPU0 GPU1 ... CPU Affinity NUMA Affinity")
    Unused("nvidia-smi", r"^nvidia-smi(\s|$)", r"^\|\s+NVIDIA-SMI \d"
           r"|^[ \t]*GPU0(?:[ \t]+[\w-]{1,20}){0,64}?[ \t]+CPU Affinity\b"),
    Unused("perf", r"^perf\s"),
    # collectl's reports: a "#" header of "<----Disks---->" groups over its column names
    Unused("collectl", r"^collectl(\s|$)", r"^#[ \t]*(?:<-{2,}[\w\[\] ]{0,30}-{2,}>[ \t]*){1,12}"),
    # Juju's model status: its tables' headers, or an application's row alone ("mongodb  active
    # 3  mongodb  6/stable  199  no")
    Unused("juju", r"^juju(\s|$)",
           r"^App[ \t]+Version[ \t]+Status[ \t]+Scale[ \t]+Charm\b"
           r"|^Model[ \t]+Controller[ \t]+Cloud/Region[ \t]+Version\b"
           r"|^[\w-]{1,64}[ \t]+(?:\S{1,40}[ \t]+)?(?:active|blocked|waiting|maintenance|error|unknown)[ \t]+"
           r"\d{1,5}(?:/\d{1,5})?[ \t]+[\w-]{1,64}[ \t]+(?:[\w.-]{1,20}/)?(?:stable|candidate|beta|edge)"
           r"[ \t]+\d{1,6}[ \t]+(?:yes|no)\b"),
    # a process list without the PSR column (ps aux, ps -ef) that no prompt names: the ps
    # reader takes a prompted one; by content it looks for PSR, the CPU a process ran on
    Unused("ps", r"^(?!)",
           r"^[ \t]*USER[ \t]+PID[ \t]+%CPU[ \t]+%MEM[ \t]+VSZ[ \t]+RSS[ \t]+TTY[ \t]+STAT[ \t]+START"
           r"[ \t]+TIME[ \t]+COMMAND[ \t]*$"
           r"|^[ \t]*UID[ \t]+PID[ \t]+PPID[ \t]+C[ \t]+STIME[ \t]+TTY[ \t]+TIME[ \t]+CMD[ \t]*$"),
    # the version block of TiDB's servers (tidb-server -V, pd-server -V, tikv-server -V)
    Unused("TiDB version", r"^(?:\S*/)?(?:tidb|pd|tikv|tiflash)-server\s+(?:-V|--version)\b",
           r"^(?:>[ \t]?)?Release Version:[ \t]+v?\d[^\n]{0,80}\n"
           r"(?:>[ \t]?)?(?:Edition:[^\n]{0,80}\n(?:>[ \t]?)?)?Git Commit Hash:[ \t]+[0-9a-f]{7,40}[ \t]*$"),
    # memory summaries whose figures the parsers read elsewhere (/proc/meminfo, free)
    Unused("vmstat -s", r"^vmstat\s+(?:.*\s)?(?:-[a-zA-Z]*s\b|--stats)",
           r"^[ \t]*\d+ [KM] total memory\n[ \t]*\d+ [KM] used memory"),
    Unused("swapon", r"^(?:swapon|swapoff|mkswap)(\s|$)",
           r"^Filename\s+Type\s+Size\s+Used\s+Priority|^NAME\s+TYPE\s+SIZE\s+USED\s+PRIO\s*$"
           # a row without its header (swapon --show, /proc/swaps): name, type, size, used, priority
           r"|^/[\w./\-]{1,200}[ \t]+(?:partition|file)[ \t]+[\d.]+[KMGT]?[ \t]+[\d.]+[KMGTB]?"
           r"[ \t]+-?\d{1,5}[ \t]*$"),
    # System V IPC: the shared memory segments an SGA or shared_buffers is in, not what a rule reads
    Unused("ipcs", r"^ipcs(\s|$)",
           r"^-{6} (?:Shared Memory|Semaphore|Messages?)(?: [A-Z][a-z]+)? -{4,}[ \t]*$"),
    # tuned-adm's other commands (active and list are read): help, switching profiles
    Unused("tuned-adm", r"^tuned-adm\s+(?:help|profile|off|recommend|verify|auto_profile|profile_mode)\b"),
    Unused("hugeadm", r"^hugeadm\s",
           r"^[ \t]*Size[ \t]+Minimum[ \t]+Current[ \t]+Maximum[ \t]+Default[ \t]*$"),
    Unused("xsos", r"^xsos(\s|$)",
           r"^MEMORY\n[ \t]+Stats graphed as percent of MemTotal:"
           r"|^[ \t]*HugePages:\n[ \t]+[\d.]+ [KMGT]iB pre-allocated to HugePages"),
    # pidstat's per-process tables (-u, -r, -d, -w), under sysstat's "Linux ... (N CPU)" banner
    Unused("pidstat", r"^pidstat(\s|$)",
           r"^(?:#[ \t]+Time|\d{1,2}:\d\d:\d\d(?:[ \t]?[AP]M)?)[ \t]+UID[ \t]+(?:TGID[ \t]+)?"
           r"(?:TID|PID)[ \t]+(?:%usr|minflt/s|kB_rd/s|cswch/s|StkSize|threads|prio)\b"),
    # sar's paging, memory, swapping and queue reports (its CPU and network reports are read)
    Unused("sar", r"^[Ss]ar\s+(?:.*\s)?-[BrRWqbSvwHy]\b",
           r"^\d{1,2}:\d\d:\s?\d\d(?:\s?[AP]M)?\s+(?:pgpgin/s\s+pgpgout/s|kbmemfree\s+kbmemused"
           r"|kbmemfree\s+kbavail|pswpin/s\s+pswpout/s|runq-sz\s+plist-sz|tps\s+rtps\s+wtps"
           r"|kbswpfree\s+kbswpused|proc/s\s+cswch/s)\b"),
    # readk: System V sar (SCO OpenServer, Solaris, AIX, HP-UX): swapping, queue and paging
    # reports with their own columns ("swpin/s bswin/s", "runq-sz %runocc", "vflt/s pflt/s"),
    # not sysstat's; never read as Linux
    Unused("sar (System V)", r"^(?!)",
           r"^[ \t]*\d{1,2}:\d\d:\d\d[ \t]+(?:swpin/s[ \t]+bswin/s|runq-sz[ \t]+%runocc"
           r"|vflt/s[ \t]+pflt/s|atch/s[ \t]+pgin/s|pgout/s[ \t]+ppgout/s|freemem[ \t]+freeswap?)\b",
           other_system=True),
    # readk: kernel log lines that are not about NUMA (those are read: collectors.parsers.dmesg_numa),
    # stamped with the seconds since boot or dmesg -T's date
    Unused("dmesg", r"^dmesg(\s|$)",
           r"^\[[ \t]*\d{1,7}\.\d{6}\][ \t]+\S"
           r"|^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\][ \t]+\S"),
    # a system log as syslog or journalctl writes it ("Feb 15 20:05:28 host1 kernel: sd 0:0:11:0:
    # ...", "2024-05-01T10:00:00.123+08:00 db1 mysqld[812]: ..."): a host, a program, its
    # message; the kernel's NUMA lines in it are read (collectors.parsers.dmesg_numa) before this
    Unused("system log", r"^(?:cat|more|less|head|tail|grep|egrep|zgrep|zcat)\s.*/var/log/",
           r"^(?:[A-Z][a-z]{2}[ \t]+\d{1,2}[ \t]+\d\d:\d\d:\d\d(?:\.\d{1,9})?"
           r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)"
           r"[ \t]+[\w.\-]{1,64}[ \t]+[\w.\-/@]{1,64}(?:\[\d{1,9}\])?:[ \t]"),
    # readk: iostat's CPU report alone ("iostat -c", or cut from its device report by a
    # post's notes): the device report is read, the CPU figures are not
    Unused("iostat -c", r"^iostat\s+(?:-\w+\s+)*-c\b",
           r"^avg-cpu:[ \t]+%user[ \t]+%nice[ \t]+%sys(?:tem)?[ \t]+%iowait\b", other_system=True),
    # readk: vmstat of Solaris ("r b w swap free re mf pi po ...") and AIX ("r b avm fre re pi
    # po ..."): other columns and units than Linux's (the command is the same: by content only)
    Unused("vmstat (Solaris, AIX)", r"^(?!)",
           r"^[ \t]*r[ \t]+b[ \t]+w[ \t]+swap[ \t]+free[ \t]+re[ \t]+mf[ \t]+pi[ \t]+po\b"
           r"|^[ \t]*r[ \t]+b[ \t]+avm[ \t]+fre[ \t]+re[ \t]+pi[ \t]+po\b",
           other_system=True),
    # Solaris's iostat -x ("extended device statistics", then "device r/s w/s kr/s kw/s wait
    # actv svc_t %w %b"): its svc_t and %b are not Linux's await and %util (by content only)
    Unused("iostat (Solaris)", r"^(?!)",
           r"^[ \t]*(?:extended device statistics[ \t]*\n[ \t]*)?device[ \t]+r/s[ \t]+w/s[ \t]+kr/s[ \t]+kw/s"
           r"[ \t]+wait[ \t]+actv[ \t]+svc_t[ \t]+%w[ \t]+%b\b",
           other_system=True),
    # cpupower's usage text ("cpupower" alone, "cpupower help"): no reading of the host
    Unused("cpupower usage", r"^cpupower(?:\s+(?:help|--help|-h))?\s*$",
           r"^Usage: cpupower \[-d\|--debug\]"),
    # any program's usage text ("usage: numactl [--all | -a] ...", "Usage: iostat [ options ]",
    # "用法：free [选项]"): how to run it, no reading of the host
    # (by "--help" only: "-h" is "human-readable" to du, sort, df, free ...)
    Unused("usage text", r"(?:^|\s)--help$",
           r"^[ \t]*(?:usage|Usage|USAGE|用法)[ \t]*[:：][ \t]*(?:\S+/)?[\w.-]{1,40}[ \t]+[\[<(-]"),
    # cpupower's per-CPU idle and frequency counters (its idle-info and frequency-info are read)
    Unused("cpupower monitor", r"^cpupower(?:\s+-\S+(?:\s+\S+)?)*\s+monitor\b",
           r"^[ \t]*\|?[ \t]*(?:Nehalem|SandyBridge|HaswellExtended|Mperf|Idle_Stats|RAPL)[ \t]+\|\|"
           r"|^[ \t]*(?:PKG[ \t]*\|[ \t]*)?CORE[ \t]*\|[ \t]*CPU[ \t]*\|"),
    # a process's or its threads' status lines ("grep Cpus_allowed_list /proc/28863/task/*/status")
    # or every process's, in a loop ("for file in /proc/*/status ; do awk ... $file; done")
    Unused("/proc/PID/status",
           r"^(?:cat|grep|egrep|head|tail)\s.*/proc/(?:\d+|\*|self)(?:/task/(?:\d+|\*))?/status\b"
           r"|\bfor\s+\w+\s+in\s+/proc/(?:\*|\[0-9\]\*)/status\b",
           r"^/proc/\d+/(?:task/\d+/)?status:\w+:"),
    # a process's system calls and open files, the hardware tree of lshw, ansible and
    # SQL*Plus banners (sar's memory and paging reports: above)
    Unused("strace", r"^strace\s", r"^strace: Process \d+ attached"),
    Unused("lsof", r"^lsof(\s|$)",
           r"^COMMAND\s+PID\s+(?:TID\s+)?USER\s+FD\s+TYPE\s+DEVICE\s+SIZE/OFF\s+NODE\s+NAME"),
    Unused("lshw", r"^lshw(\s|$)",
           r"^[ \t]*\*-(?:core|cpu|memory|firmware|cache|bank|pci|network|storage|disk)(?::\d+)?[ \t]*\n"
           r"[ \t]+description: "
           r"|^\S[^\n]{0,80}\n[ \t]{4}description: [^\n]+\n[ \t]{4}product: "),
    Unused("ansible", r"^ansible(?:-playbook|-galaxy|-config)?(\s|$)",
           r"^[ \t]*config file = [^\n]*\n[ \t]*configured module search path = "),
    Unused("sqlplus", r"^sqlplus(\s|$)",
           r"^SQL\*Plus: Release (?:\d+[\d.]* |- Production on )"
           r"|^Oracle Database \d+[a-z]? (?:Enterprise|Standard|Express) Edition Release \d+[\d.]* "),
    # valgrind's report: every line behind the "==PID==" of the process it ran
    Unused("valgrind", r"^valgrind(\s|$)",
           r"^==(?P<valgrind_pid>\d{1,9})==(?:[ \t][^\n]*)?\n==(?P=valgrind_pid)==(?:[ \t]|$)"),
    # PyTorch's collect_env report (its "CPU:" section is lscpu's output, read on its own)
    Unused("PyTorch collect_env", r"(?:^|\s)(?:-m\s+torch\.utils\.collect_env|\S*collect_env\.py)\b",
           r"^PyTorch version: \S+\nIs debug build: (?:True|False)\b"
           r"|^Is CUDA available: (?:True|False|No)\b[^\n]*\nCUDA runtime version: "
           r"|^Versions of relevant libraries:\n\[(?:pip3?|conda)\] "),
    # a command line interface's questions and the answers typed ("? What would you like to
    # deploy? local": Go's survey and Node's inquirer print them so; MongoDB's atlas, gh)
    Unused("interactive CLI", r"^(?:\S*/)?(?:atlas|gh)\s+\w",
           r"^\? [A-Z][^?\n]{2,200}\?[ \t]+\S[^\n]{0,200}$"),
    Unused("git", r"^git\s"),
    Unused("spack", r"^spack\s"),
    Unused("make", r"^(?:make|cmake|gcc|cc|g\+\+|go build|cargo)\b"),
    # benchmarks whose results no rule reads (STREAM and BenchmarkSQL are read)
    Unused("sysbench", r"^sysbench(\s|$)",
           r"^sysbench \d+\.\d+|^SQL statistics:\s*$|^\s+transactions:\s+\d+\s+\([\d.]+ per sec\.\)"
           # its progress lines (--report-interval): "[ 560s ] thds: 24 tps: 2335.16 qps: ..."
           r"|^\[[ \t]*\d{1,7}s[ \t]*\][ \t]*thds:[ \t]*\d+[ \t]+tps:"
           r"|^Number of threads: \d+\s*$"),
    Unused("fio", r"^fio(\s|$)", r"^\S+: \(g=\d+\): rw=\w+|^\s*(?:READ|WRITE): bw=[\d.]+"),
    Unused("pgbench", r"^pgbench(\s|$)",
           r"^tps = [\d.]+ \((?:in|ex)cluding|^number of transactions actually processed: \d+"),
    Unused("redis-benchmark", r"^redis-benchmark(\s|$)", r"^====== [A-Z ]{2,40} ======\s*$"),
    Unused("wrk", r"^wrk2?(\s|$)",
           r"^Running \d+(?:\.\d+)?[smh]? test @ \S+\n[ \t]+\d+ threads? and \d+ connections?"),
    Unused("iperf", r"^iperf3?(\s|$)", r"^\[\s*(?:\d+|SUM)\]\s+\d+\.\d+-\d+\.\d+\s+sec\s+[\d.]+ [KMG]?Bytes"),
    Unused("mlc", r"^(?:\./)?mlc(\s|$)", r"^Intel\(R\) Memory Latency Checker"),
    Unused("stress-ng", r"^stress-ng(\s|$)", r"^stress-ng: info:\s+\[\d+\]"),
    # a program started under a NUMA policy: what it prints (or numactl's refusal, "libnuma:
    # Warning: node argument 2 is out of range") is the program's run, not numactl's tables
    Unused("a program run under numactl",
           r"^numactl\s+(?:\S+\s+)*?(?:--(?:cpunodebind|membind|physcpubind|interleave|preferred|localalloc)\b"
           r"|-[NmCip](?:\s|\d|=))"),
    Unused("dd", r"^dd\s", r"^\d+ bytes .{0,40}copied, [\d.]+ s, [\d.]+ [kMG]?B/s$"),
    Unused("time", r"^time$", r"^real\s+\d+m[\d.]+s\nuser\s+\d+m[\d.]+s\nsys\s+\d+m[\d.]+s"),
    # database tools and result grids no parser reads
    # redis-cli: INFO's sections, replies ("1) \"maxmemory\"" / "2) \"8589934592\"" of CONFIG
    # GET) and the "Biggest string found 'k' has 512000 bytes" lines of --bigkeys / --memkeys;
    # its commands typed alone (CONFIG GET/SET, SLOWLOG GET)
    Unused("redis-cli",
           r"^redis-cli(\s|$)|(?i:^(?:config\s+(?:get|set|rewrite|resetstat)|slowlog\s+(?:get|len|reset)"
           r"|redis-cli\s+(?:.*\s)?--(?:bigkeys|memkeys|hotkeys)))\b",
           r"^# (?:Server|Clients|Memory|Stats|Replication|CPU|Keyspace)\n\w+:"
           r'|^1\) "[^"\n]{1,200}"\n2\) "|^1\) "[\w.\-]{1,64}"[ \t]*$'
           r"|^Biggest[ \t]{1,4}\w{3,6} found '[^'\n]{1,300}' has \d"),
    # mpstat's interrupt rates ("mpstat -I SUM -P ALL 5": CPU intr/s); its CPU table is read
    Unused("mpstat -I", r"^mpstat\s(?:.*\s)?-I\s",
           r"^\d\d:\d\d:\d\d(?:[ \t]?[AP]M)?[ \t]+CPU[ \t]+(?:intr/s|\d+/s|HI/s)"),
    # Redis's persistence log messages (the bgsave ones service_log reads have a
    # "Background saving started" after a "Saving..."): with or without the pid/time prefix
    Unused("Redis log", r"^(?:cat|tail|head|less|more|grep)\s.*redis[\w.\-]*\.log\b",
           r"^(?:\d{1,9}:[MCSX] \d\d \w{3}(?: \d{4})? \d\d:\d\d:\d\d\.\d{3} [*#.-] "
           r"|\[\d{1,9}\] \d\d \w{3} \d\d:\d\d:\d\d\.\d{3} \\?[*#.-] )?"
           r"(?:RDB: \d+ MB of memory used by copy-on-write|\d+ changes in \d+ seconds\. Saving\.\.\.?$"
           r"|Can't save in background: fork: |Background saving terminated with success$)"),
    # SQL*Plus's instance start and stop ("ORACLE instance started.", the SGA's sizes, an ORA- error)
    Unused("sqlplus startup",
           r"(?i)^(?:startup(?:\s+(?:nomount|mount|open|force|restrict|upgrade|pfile=\S+))*"
           r"|shutdown(?:\s+(?:immediate|abort|normal|transactional))?)\s*;?\s*$",
           r"^ORACLE instance (?:started|shut down)\.$|^Total System Global Area\s+\d+ bytes"),
    Unused("mysqladmin", r"^mysqladmin(\s|$)", r"^Uptime: \d+\s+Threads: \d+\s+Questions: \d+"),
    Unused("obd", r"^obd\s"),
    Unused("ob_admin", r"^ob_admin(\s|$)"),
    Unused("psql", r"^psql(\s|$)"),
    Unused("SQL result", r"(?i)^(?:select|show|desc|describe|explain|use|set|call|with)\b",
           r"^\d+ rows? in set \([\d.]+ sec\)|^Empty set \([\d.]+ sec\)"
           r"|^Query OK, \d+ rows? affected|^Database changed$"),
    # /etc/fstab as cat prints it (or a post quotes it): device, mount point, type, options, dump, pass
    Unused("fstab", r"^(?:cat|more|less)\s+/etc/fstab\b",
           r"^(?:UUID=[\w-]+|LABEL=\S+|/dev/\S+|/\S+)\s+(?:/\S*|none|swap)\s+"
           r"(?:swap|ext[234]|xfs|btrfs|vfat|nfs4?|tmpfs|auto)\s+\S+\s+\d\s+\d\s*$"),
    Unused("cat", r"^(?:cat|more|less|head|tail|zcat)\s+\S"),
)
# fmt: on

_SUDO = re.compile(r"^(?:sudo(?:\s+-\S+)*|time|nice(?:\s+-n\s*-?\d+)?|env(?:\s+\w+=\S*)+)\s+")
_CONTENT_MAX_CHARS = 2048


@functools.lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...]:
    return tuple(
        (row.what, re.compile(row.command), re.compile(row.content, re.M) if row.content else None)
        for row in CATALOGUE
    )


@functools.lru_cache(maxsize=1)
def _any_content() -> re.Pattern[str]:
    joined = "|".join(f"(?:{row.content})" for row in CATALOGUE if row.content)
    return re.compile(joined, re.M)


@functools.lru_cache(maxsize=1)
def _other_systems() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple(
        (row.what, re.compile(row.content, re.M)) for row in CATALOGUE if row.other_system and row.content
    )


def other_system_output(head: str) -> str | None:
    r"""What the catalogue calls an output starting with ``head`` that a command a
    parser reads printed on another system, or ``None``.

    >>> other_system_output(" r b w   swap  free  re  mf pi po fr de sr\n 0 0 0 15020  4304  9  58 198 228")
    'vmstat (Solaris, AIX)'
    """
    head = head[:_CONTENT_MAX_CHARS]
    return next((what for what, rx in _other_systems() if rx.search(head)), None)


def unused_command(command: str) -> str | None:
    """What the catalogue calls the output of ``command``, or ``None``."""
    command = command.strip()[:4096]
    while True:
        stripped = _SUDO.sub("", command, count=1)
        if stripped == command:
            break
        command = stripped
    for what, rx, _content in _compiled():
        if rx.search(command):
            return what
    return None


def unused_output(head: str) -> str | None:
    """What the catalogue calls an output that starts with ``head``, or ``None``."""
    head = head[:_CONTENT_MAX_CHARS]
    if not _any_content().search(head):
        return None
    # the output nearest the head's start (a later one is what follows it); on
    # a tie, the catalogue's order
    found = [
        (m.start(), order, what)
        for order, (what, _rx, content) in enumerate(_compiled())
        if content is not None and (m := content.search(head))
    ]
    return min(found)[2] if found else None
