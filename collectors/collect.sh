#!/bin/sh
# Casebook on-host collector.
#
# Gathers the command outputs and /proc and /sys files that Casebook analyses
# (CPU and NUMA topology, memory, huge pages, sysctls, CPU/IRQ/softirq load,
# disks, tc qdiscs, libvirt domains, optionally MySQL/MariaDB and OceanBase)
# into one .tar.gz with a manifest.json describing every artifact.
#
# Portability contract: POSIX sh (dash, bash, busybox ash) plus coreutils.
# Every other command is optional: a missing command is skipped and noted in
# collector.log, a failing one is recorded with its exit code. Nothing here
# changes the system; the script only reads.
#
# Run `sh collect.sh --help` for the options.

COLLECTOR_VERSION="1.0"

# Parsers read the C locale's number and date formats.
LC_ALL=C
LANG=C
export LC_ALL LANG
# top sizes its batch output from these otherwise (see the top call below).
unset COLUMNS LINES 2>/dev/null || true
# The archive holds sensitive host details: nothing we write is world-readable.
umask 077

usage() {
    cat <<'EOF'
Usage: sh collect.sh [OPTIONS]

Collects diagnostic data for Casebook (NUMA, memory, KVM/libvirt, database
performance troubleshooting) into a .tar.gz archive with a manifest.json.
Read-only: nothing on the host is changed. Runs as root or as an ordinary
user (unprivileged runs collect less; every command's exit code is recorded).

Options:
  --output FILE            Write the archive to FILE (default:
                           ./casebook-HOSTNAME-YYYYmmddTHHMMSSZ.tar.gz).
                           "-" writes it to standard output, e.g. to collect
                           from many hosts without copying the script:
                           ssh HOST sh -s -- --output - <collect.sh >HOST.tar.gz
  --timeout SECONDS        Time limit for each command (default 30).
  --redact                 Replace the host's names (hostname, FQDN, uname -n)
                           with host-1 and every IPv4/IPv6 address with ip-1,
                           ip-2, ... consistently in every collected file and in
                           the manifest. Loopback, unspecified and netmask
                           addresses are kept. The mapping is never written.
  --redact-name NAME       Also replace NAME (another host's name) with host-2,
                           host-3, ... Repeatable. Implies --redact.

  --mysql                  Also collect MySQL/MariaDB/Percona data:
                           SHOW GLOBAL VARIABLES, SELECT VERSION() and the tail
                           of the error log (file from @@log_error, else the
                           systemd journal of the mysql/mariadb unit).
  --mysql-defaults-file F  Client option file with the credentials ([client]
                           user=, password=, host=, port= or socket=).
                           Without it, the standard environment is used:
                           MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_USER, MYSQL_PWD.
                           Credentials are never put on a command line.
  --log-lines N            Lines of the error log to keep (default 5000), plus
                           up to 300 lines of its last start-up when that is
                           older (buffer pool and NUMA policy messages).

  --ping HOST              Measure the round trip to HOST (another node of the
                           same deployment: database peers, ODP, the storage
                           network) with ping -c 20 -i 0.2. Repeatable.

  --oceanbase              Also collect OceanBase/ODP data: SHOW PARAMETERS
                           (cpu_quota_concurrency, net_thread_count, cpu_count,
                           ...), SHOW PROXYCONFIG (server_routing_mode, ...) and
                           plan_type counts from oceanbase.gv$sql_audit. Uses
                           obclient, else mysql, else mariadb.
  --ob-defaults-file F     Client option file for the observer (sys tenant),
                           directly or through ODP.
  --odp-defaults-file F    Client option file for ODP (SHOW PROXYCONFIG);
                           default: the --ob-defaults-file.

  --upload URL             After collecting, POST the archive to the Casebook
                           server URL (multipart field "file" to
                           URL/api/v1/snapshots/) and print the report URL.
  --token TOKEN            API token for --upload ("Authorization: Token ...").
                           The environment variable CASEBOOK_TOKEN works too and
                           keeps the token out of the process list.
  --label TEXT             Snapshot label sent with --upload.
  --cluster NAME           Cluster name sent with --upload (hosts of one
                           cluster are compared).
  --keep-going             Upload failures do not change the exit status.
  -q, --quiet              Print only the archive path (and report URL).
  -h, --help               Show this help.

Environment: TMPDIR (work directory parent), CASEBOOK_TOKEN, MYSQL_HOST,
MYSQL_TCP_PORT, MYSQL_USER, MYSQL_PWD.

Archive layout:
  manifest.json            collector_version, hostname, time (UTC, ISO 8601),
                           user, privileged, commands[] (name, command, file,
                           exit_code, duration_s, kind) and files[] (path, kind)
  commands/NAME.txt        standard output of each command
  proc/..., sys/..., etc/  copies of the files read
  collector.log            skipped commands, standard error, notes

Exit status: 0 on success, 1 when the upload failed (the archive is kept),
2 on a usage error or when no archive could be written.
EOF
}

die() {
    printf 'collect.sh: %s\n' "$*" >&2
    exit 2
}

say() {
    [ "$QUIET" = 1 ] || printf '%s\n' "$*" >&2
}

# ----------------------------------------------------------------- options

OUTPUT=""
CMD_TIMEOUT=30
REDACT=0
REDACT_NAMES=""
WANT_MYSQL=0
MYSQL_DEFAULTS=""
LOG_LINES=5000
WANT_OB=0
PING_TARGETS=""
OB_DEFAULTS=""
ODP_DEFAULTS=""
UPLOAD_URL=""
TOKEN="${CASEBOOK_TOKEN:-}"
LABEL=""
CLUSTER=""
KEEP_GOING=0
QUIET=0

need_arg() {
    [ "$2" -ge 2 ] || die "option $1 needs a value (see --help)"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --output) need_arg "$1" $#; OUTPUT="$2"; shift 2 ;;
        --output=*) OUTPUT="${1#*=}"; shift ;;
        --timeout) need_arg "$1" $#; CMD_TIMEOUT="$2"; shift 2 ;;
        --timeout=*) CMD_TIMEOUT="${1#*=}"; shift ;;
        --redact) REDACT=1; shift ;;
        --redact-name) need_arg "$1" $#; REDACT=1
            REDACT_NAMES="$REDACT_NAMES
$2"; shift 2 ;;
        --mysql) WANT_MYSQL=1; shift ;;
        --mysql-defaults-file) need_arg "$1" $#; MYSQL_DEFAULTS="$2"; WANT_MYSQL=1; shift 2 ;;
        --mysql-defaults-file=*) MYSQL_DEFAULTS="${1#*=}"; WANT_MYSQL=1; shift ;;
        --log-lines) need_arg "$1" $#; LOG_LINES="$2"; shift 2 ;;
        --ping) need_arg "$1" $#
            PING_TARGETS="$PING_TARGETS
$2"; shift 2 ;;
        --oceanbase) WANT_OB=1; shift ;;
        --ob-defaults-file) need_arg "$1" $#; OB_DEFAULTS="$2"; WANT_OB=1; shift 2 ;;
        --odp-defaults-file) need_arg "$1" $#; ODP_DEFAULTS="$2"; WANT_OB=1; shift 2 ;;
        --upload) need_arg "$1" $#; UPLOAD_URL="$2"; shift 2 ;;
        --upload=*) UPLOAD_URL="${1#*=}"; shift ;;
        --token) need_arg "$1" $#; TOKEN="$2"; shift 2 ;;
        --label) need_arg "$1" $#; LABEL="$2"; shift 2 ;;
        --cluster) need_arg "$1" $#; CLUSTER="$2"; shift 2 ;;
        --keep-going) KEEP_GOING=1; shift ;;
        -q|--quiet) QUIET=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option: $1 (see --help)" ;;
    esac
done

case "$CMD_TIMEOUT" in ''|*[!0-9]*) die "--timeout needs a whole number of seconds" ;; esac
case "$LOG_LINES" in ''|*[!0-9]*|0) die "--log-lines needs a whole number >= 1" ;; esac
if [ -n "$UPLOAD_URL" ] && [ "$OUTPUT" = "-" ]; then
    die "--upload needs a file: --output - writes the archive to standard output"
fi
if [ -n "$UPLOAD_URL" ] && [ -z "$TOKEN" ]; then
    die "--upload needs --token (or CASEBOOK_TOKEN in the environment)"
fi
for f in "$MYSQL_DEFAULTS" "$OB_DEFAULTS" "$ODP_DEFAULTS"; do
    [ -z "$f" ] || [ -r "$f" ] || die "cannot read defaults file: $f"
done
[ -n "$ODP_DEFAULTS" ] || ODP_DEFAULTS="$OB_DEFAULTS"

# ---------------------------------------------------------------- work dir

WORK=""
# The command being waited for: an interrupted collector stops it at once.
# (timeout(1) runs in a process group of its own, so Ctrl-C and a signal to
# the collector's group do not reach it.)
CUR_PID=""
# shellcheck disable=SC2317  # invoked by the traps below
stop_current() {
    if [ -n "$CUR_PID" ]; then
        kill -TERM "$CUR_PID" 2>/dev/null
    fi
}
# shellcheck disable=SC2317  # invoked by the traps below
cleanup() {
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
trap 'stop_current; cleanup; exit 130' INT
trap 'stop_current; cleanup; exit 143' TERM
trap 'stop_current; cleanup; exit 129' HUP

TMPBASE="${TMPDIR:-/tmp}"
if command -v mktemp >/dev/null 2>&1; then
    WORK=$(mktemp -d "$TMPBASE/casebook-collect.XXXXXX") || die "cannot create a work directory in $TMPBASE"
else
    WORK="$TMPBASE/casebook-collect.$$"
    mkdir "$WORK" || die "cannot create a work directory in $TMPBASE"
fi
# STAGE becomes the archive; everything else in WORK (lists, scratch output)
# stays out of it.
STAGE="$WORK/stage"
mkdir "$STAGE" "$STAGE/commands" || die "cannot create $STAGE"
CMDS_JSON="$WORK/commands.jsonl"
FILES_JSON="$WORK/files.jsonl"
LOG="$STAGE/collector.log"
: >"$CMDS_JSON"
: >"$FILES_JSON"
: >"$LOG"

log() {
    printf '%s\n' "$*" >>"$LOG"
}

# ------------------------------------------------------------------ helpers

TAB=$(printf '\t')
CR=$(printf '\r')

# JSON string body of $1: backslash, quote, tab and CR escaped, newlines
# turned into \n, other control characters dropped.
json_escape() {
    printf '%s\n' "$1" |
        tr -d '\000-\010\013\014\016-\037' |
        sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$TAB/\\\\t/g" -e "s/$CR/\\\\r/g" |
        awk 'NR > 1 { printf "%s", "\\n" } { printf "%s", $0 }'
}

have() {
    command -v "$1" >/dev/null 2>&1
}

# Sub-second timestamps where date supports %N (GNU coreutils), else seconds.
now() {
    t=$(date +%s.%N 2>/dev/null)
    case "$t" in
        *N*|'') date +%s ;;
        *) printf '%s\n' "$t" ;;
    esac
}

elapsed() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = b - a; if (d < 0) d = 0; printf "%.3f", d }'
}

# How to bound a command's run time: coreutils timeout (with a KILL grace),
# busybox timeout, or a shell watchdog when there is no timeout at all.
TIMEOUT_MODE=none
if have timeout; then
    if timeout -k 1 5 cat /dev/null >/dev/null 2>&1; then
        TIMEOUT_MODE=coreutils
    elif timeout 5 cat /dev/null >/dev/null 2>&1; then
        TIMEOUT_MODE=plain
    fi
fi
# The shell watchdog polls in ticks: tenths of a second where sleep takes
# fractions (GNU, busybox), whole seconds where it does not.
if sleep 0.1 2>/dev/null; then
    WT_TICK=0.1
    WT_TICKS=$((CMD_TIMEOUT * 10))
    WT_GRACE_TICKS=50
else
    WT_TICK=1
    WT_TICKS=$CMD_TIMEOUT
    WT_GRACE_TICKS=5
fi

# Commands run in the background and are waited for: a trapped signal
# interrupts `wait` at once, where a foreground command would delay the trap
# until it ends.
with_timeout() {
    case "$TIMEOUT_MODE" in
        coreutils)
            timeout -k 5 "$CMD_TIMEOUT" "$@" &
            CUR_PID=$!
            wait "$CUR_PID"
            wt_rc=$?
            CUR_PID=""
            return "$wt_rc"
            ;;
        plain)
            timeout "$CMD_TIMEOUT" "$@" &
            CUR_PID=$!
            wait "$CUR_PID"
            wt_rc=$?
            CUR_PID=""
            return "$wt_rc"
            ;;
        *)
            # The watchdog learns that the command ended from a marker file,
            # never from a signal: a signal sent to a subshell before it has
            # set its own trap is swallowed (dash), and the run would stall
            # for the whole limit.
            "$@" &
            wt_pid=$!
            CUR_PID=$wt_pid
            wt_done="$WORK/done.$wt_pid"
            (
                n=0
                while [ "$n" -lt "$WT_TICKS" ]; do
                    # done, or the collector is gone (its work dir with it)
                    { [ -e "$wt_done" ] || [ ! -d "$WORK" ]; } && exit 0
                    sleep "$WT_TICK"
                    n=$((n + 1))
                done
                { [ -e "$wt_done" ] || [ ! -d "$WORK" ]; } || kill -TERM "$wt_pid" 2>/dev/null
                n=0
                while [ "$n" -lt "$WT_GRACE_TICKS" ]; do
                    # done, or the collector is gone (its work dir with it)
                    { [ -e "$wt_done" ] || [ ! -d "$WORK" ]; } && exit 0
                    sleep "$WT_TICK"
                    n=$((n + 1))
                done
                { [ -e "$wt_done" ] || [ ! -d "$WORK" ]; } || kill -KILL "$wt_pid" 2>/dev/null
            ) </dev/null >/dev/null 2>&1 &
            wt_dog=$!
            wait "$wt_pid"
            wt_rc=$?
            CUR_PID=""
            : >"$wt_done"
            wait "$wt_dog"
            rm -f "$wt_done"
            return "$wt_rc"
            ;;
    esac
}

add_command_entry() {
    # name command file exit_code duration kind
    printf '{"name": "%s", "command": "%s", "file": "%s", "exit_code": %s, "duration_s": %s, "kind": "%s"}\n' \
        "$(json_escape "$1")" "$(json_escape "$2")" "$(json_escape "$3")" "$4" "$5" "$(json_escape "$6")" \
        >>"$CMDS_JSON"
}

add_file_entry() {
    printf '{"path": "%s", "kind": "%s"}\n' "$(json_escape "$1")" "$(json_escape "$2")" >>"$FILES_JSON"
}

# run NAME KIND DISPLAY CMD [ARGS...]
# Runs CMD with a time limit, stdout to commands/NAME.txt, stderr appended to
# collector.log, and records it in the manifest. DISPLAY is the command as an
# engineer would type it (never containing credentials).
run() {
    r_name=$1 r_kind=$2 r_display=$3
    shift 3
    if ! have "$1"; then
        log "skipped $r_name: $1 not found"
        return 127
    fi
    r_file="commands/$r_name.txt"
    r_err="$WORK/stderr.tmp"
    r_start=$(now)
    with_timeout "$@" >"$STAGE/$r_file" 2>"$r_err" </dev/null
    r_rc=$?
    r_end=$(now)
    if [ -s "$r_err" ]; then
        {
            printf '== stderr of %s (exit %s)\n' "$r_display" "$r_rc"
            head -c 65536 "$r_err"
            printf '\n'
        } >>"$LOG"
    fi
    [ "$r_rc" -eq 124 ] && log "timeout after ${CMD_TIMEOUT}s: $r_display"
    add_command_entry "$r_name" "$r_display" "$r_file" "$r_rc" "$(elapsed "$r_start" "$r_end")" "$r_kind"
    return "$r_rc"
}

# supports CMD [ARGS...]: whether this variant of an installed command runs
# here (newer options such as lscpu -J); the answer is logged.
supports() {
    have "$1" || return 1
    if with_timeout "$@" >/dev/null 2>&1 </dev/null; then
        return 0
    fi
    log "not supported here, skipped: $*"
    return 1
}

# grab SRC KIND: copy a /proc, /sys or /etc file to the same relative path.
grab() {
    g_src=$1 g_kind=$2
    [ -e "$g_src" ] || return 0
    g_rel=${g_src#/}
    g_dir=$(dirname "$g_rel")
    mkdir -p "$STAGE/$g_dir"
    # cat, not cp: /proc and /sys report sizes that are not the content's.
    if with_timeout cat "$g_src" >"$STAGE/$g_rel" 2>"$WORK/stderr.tmp"; then
        add_file_entry "$g_rel" "$g_kind"
    else
        log "cannot read $g_src: $(head -c 300 "$WORK/stderr.tmp")"
        rm -f "$STAGE/$g_rel"
    fi
}

# Domain names become file names: keep a safe, readable subset.
safe_name() {
    printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-100
}

# ------------------------------------------------------------ host identity

HOSTNAME_SHORT=$( (hostname 2>/dev/null || uname -n) | head -n 1)
# hostname -f asks the resolver, which can hang on a host with broken DNS.
if [ "$TIMEOUT_MODE" = none ]; then
    HOSTNAME_FQDN=$(hostname -f 2>/dev/null </dev/null | head -n 1)
else
    HOSTNAME_FQDN=$(timeout 5 hostname -f 2>/dev/null </dev/null | head -n 1)
fi
UNAME_N=$(uname -n 2>/dev/null)
[ -n "$HOSTNAME_SHORT" ] || HOSTNAME_SHORT="$UNAME_N"
USER_NAME=$(id -un 2>/dev/null || printf '%s' "${USER:-unknown}")
if [ "$(id -u 2>/dev/null)" = 0 ]; then PRIVILEGED=true; else PRIVILEGED=false; fi
START_TIME=$(date -u +%Y-%m-%dT%H:%M:%SZ)
log "casebook collector $COLLECTOR_VERSION started $START_TIME as $USER_NAME (privileged: $PRIVILEGED)"
log "timeout mode: $TIMEOUT_MODE, per-command limit ${CMD_TIMEOUT}s"

say "collecting system data (a few seconds)..."

# --------------------------------------------------------------- CPU & NUMA

run lscpu lscpu "lscpu" lscpu
# -J arrived in util-linux 2.30 (not on RHEL/CentOS 7): an unsupported
# variant is noted in the log rather than recorded as an empty artifact.
if supports lscpu -J; then
    run lscpu_json lscpu "lscpu -J" lscpu -J
fi
run numactl_hardware numactl_hardware "numactl -H" numactl -H
run numastat numastat "numastat" numastat
run numastat_m numastat "numastat -m" numastat -m
# CPU -> core/socket/node map (util-linux >= 2.17): fills what an old lscpu summary lacks
run lscpu_parse lscpu "lscpu -p" lscpu -p

# Node CPU lists and distances come with numactl -H; /proc/cpuinfo adds
# nothing lscpu does not say. Every artifact here has a parser.
for node in /sys/devices/system/node/node[0-9]*; do
    [ -d "$node" ] || continue
    grab "$node/meminfo" node_meminfo
    grab "$node/numastat" node_numastat
done

# ------------------------------------------------------------ memory & kernel

grab /proc/meminfo meminfo
run free free_kb "free" free
run vmstat vmstat "vmstat 1 3" vmstat 1 3
# DIMMs per socket and channel (needs root; without SMBIOS, e.g. in most VMs, it prints nothing useful)
run dmidecode_memory dmidecode_memory "dmidecode -t memory" dmidecode -t memory
grab /proc/zoneinfo zoneinfo
grab /proc/cmdline cmdline
grab /sys/kernel/mm/transparent_hugepage/enabled thp_enabled
grab /sys/kernel/mm/transparent_hugepage/defrag thp_defrag
grab /proc/sys/vm/nr_hugepages nr_hugepages
run sysctl sysctl "sysctl -a" sysctl -a
# Reclaim and compaction stalls, swap-in/out since boot (memory.direct_reclaim_stalls)
grab /proc/vmstat proc_vmstat
# KSM: whether ksmd runs and how much it merges (kvm.ksm_active); one file per line
if [ -d /sys/kernel/mm/ksm ]; then
    run ksm ksm "grep . /sys/kernel/mm/ksm/*" grep . /sys/kernel/mm/ksm/run /sys/kernel/mm/ksm/pages_shared \
        /sys/kernel/mm/ksm/pages_sharing /sys/kernel/mm/ksm/pages_unshared /sys/kernel/mm/ksm/pages_volatile \
        /sys/kernel/mm/ksm/full_scans /sys/kernel/mm/ksm/merge_across_nodes /sys/kernel/mm/ksm/sleep_millisecs \
        /sys/kernel/mm/ksm/pages_to_scan
fi
run uname kernel "uname -a" uname -a
grab /etc/os-release kernel

# ----------------------------------------------------------------- CPU load

grab /proc/interrupts interrupts
grab /proc/softirqs softirqs
# Per-CPU lines ("-1") exist in procps-ng top since 3.3.x. procps-ng 4 prints
# CPUs two (or more) abreast and, at its default 80 columns, cuts off every
# CPU after the first: the wide screen keeps all of them. Older tops reject
# -1 or -w, and then the summary form is the best there is.
if supports top -bn1 -1 -w 512; then
    run top top "top -bn1 -1 -w 512" top -bn1 -1 -w 512
elif supports top -bn1 -1; then
    run top top "top -bn1 -1" top -bn1 -1
else
    run top top "top -bn1" top -bn1
fi
run mpstat mpstat "mpstat -P ALL 1 1" mpstat -P ALL 1 1
run sar_cpu sar_cpu "sar -u 1 1" sar -u 1 1
# CPU frequency governor and idle states (cpu.governor_not_performance); without
# cpupower the governors of sysfs (a guest usually has neither)
if have cpupower; then
    run cpupower_frequency cpupower "cpupower frequency-info" cpupower frequency-info
    run cpupower_idle cpupower "cpupower idle-info" cpupower idle-info
elif [ -e /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor ]; then
    run scaling_governor scaling_governor "grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor" \
        grep . /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor
fi

# -------------------------------------------------------------------- disks

run iostat iostat "iostat -x 1 2" iostat -x 1 2
# The I/O scheduler of every block device, and whether it spins
for f in /sys/block/*/queue/scheduler; do
    [ -e "$f" ] || break
    run io_scheduler io_scheduler "grep . /sys/block/*/queue/scheduler /sys/block/*/queue/rotational" \
        grep . /sys/block/*/queue/scheduler /sys/block/*/queue/rotational
    break
done
run df df "df -k" df -k

# ------------------------------------------------------------------ network

run tc_qdisc tc_qdisc "tc qdisc show" tc qdisc show
if supports tc -j qdisc show; then
    run tc_qdisc_json tc_qdisc "tc -j qdisc show" tc -j qdisc show
fi

# Round trips inside the deployment: a LAN hop should be well under 0.5 ms.
printf '%s\n' "$PING_TARGETS" | awk 'length($0) > 0' >"$WORK/ping-targets"
while IFS= read -r target; do
    case "$target" in
        -*) log "skipped ping target $target: not a host name" ; continue ;;
    esac
    run "ping_$(safe_name "$target")" ping "ping -c 20 -i 0.2 $target" ping -c 20 -i 0.2 "$target"
done <"$WORK/ping-targets"

# ------------------------------------------------------------------ libvirt

# When virsh cannot reach libvirtd (none running, or no permission), the
# failed `virsh version` is recorded and the other virsh calls, which would
# fail the same way, are not made.
if have virsh; then
    if run virsh_version virsh_version "virsh version" virsh version &&
        run virsh_list virsh_list "virsh list --all" virsh list --all; then
        run virsh_capabilities virsh_capabilities "virsh capabilities" virsh capabilities
        with_timeout virsh list --all --name >"$WORK/domains.txt" 2>/dev/null </dev/null || : >"$WORK/domains.txt"
        while IFS= read -r dom; do
            [ -n "$dom" ] || continue
            run "virsh_dumpxml_$(safe_name "$dom")" libvirt_domain "virsh dumpxml $dom" virsh dumpxml "$dom"
        done <"$WORK/domains.txt"
    else
        # No libvirtd to ask (or no permission): the persistent definitions
        # are the next best description of the guests.
        for xml in /etc/libvirt/qemu/*.xml; do
            [ -f "$xml" ] && grab "$xml" libvirt_domain
        done
    fi
else
    log "skipped libvirt: virsh not found"
fi

# -------------------------------------------------------------- databases

# SQL_CLIENT name and SQL_DEFAULTS file for `sql NAME KIND QUERY`.
SQL_CLIENT=""
SQL_DEFAULTS=""

# sql NAME KIND FORMAT QUERY: FORMAT is -B (tab-separated, what MySQL
# variables parse from) or -t (the boxed table engineers paste, which the
# OceanBase parsers read).
sql() {
    s_name=$1 s_kind=$2 s_fmt=$3 s_query=$4
    if [ -n "$SQL_DEFAULTS" ]; then
        run "$s_name" "$s_kind" "$SQL_CLIENT $s_fmt -e \"$s_query\"" \
            "$SQL_CLIENT" --defaults-file="$SQL_DEFAULTS" "$s_fmt" -e "$s_query"
    else
        run "$s_name" "$s_kind" "$SQL_CLIENT $s_fmt -e \"$s_query\"" "$SQL_CLIENT" "$s_fmt" -e "$s_query"
    fi
}

pick_client() {
    for c in "$@"; do
        if have "$c"; then
            printf '%s\n' "$c"
            return 0
        fi
    done
    return 1
}

# Without a defaults file, MYSQL_USER/MYSQL_HOST/MYSQL_TCP_PORT go into a
# private option file (the client reads MYSQL_PWD from the environment itself),
# so that nothing secret reaches a command line.
env_defaults_file() {
    f="$WORK/env-client.cnf"
    {
        printf '[client]\n'
        [ -n "${MYSQL_USER:-}" ] && printf 'user=%s\n' "$MYSQL_USER"
        [ -n "${MYSQL_HOST:-}" ] && printf 'host=%s\n' "$MYSQL_HOST"
        [ -n "${MYSQL_TCP_PORT:-}" ] && printf 'port=%s\n' "$MYSQL_TCP_PORT"
    } >"$f"
    printf '%s\n' "$f"
}

# The error log's evidence often dates from the last start-up (buffer pool
# initialisation, NUMA memory policy), which a long-running server's later
# messages push out of any tail: keep up to 300 lines from the last "starting
# ... as process" line, then the last `max` lines, in one bounded pass.
# shellcheck disable=SC2016
LOG_EXCERPT='
/[Ss]tarting .*as process/ { start = NR; ns = 0 }
start && ns < 300 { section[++ns] = $0 }
{ ring[NR % max] = $0 }
END {
    first = NR - max + 1
    if (first < 1) first = 1
    if (start && start < first) {
        for (i = 1; i <= ns && start + i - 1 < first; i++) print section[i]
    }
    for (i = first; i <= NR; i++) print ring[i % max]
}'

if [ "$WANT_MYSQL" = 1 ]; then
    if SQL_CLIENT=$(pick_client mysql mariadb); then
        SQL_DEFAULTS="$MYSQL_DEFAULTS"
        [ -n "$SQL_DEFAULTS" ] || SQL_DEFAULTS=$(env_defaults_file)
        sql mysql_variables mysql_variables -B "SHOW GLOBAL VARIABLES"
        sql mysql_version mysql_version -B "SELECT VERSION()"
        # Where the error log is: @@log_error, relative paths being relative
        # to the data directory; "stderr" or empty means the journal.
        if [ -n "$SQL_DEFAULTS" ]; then
            set -- "$SQL_CLIENT" --defaults-file="$SQL_DEFAULTS"
        else
            set -- "$SQL_CLIENT"
        fi
        LOG_ERROR=$(with_timeout "$@" -N -B -e "SELECT @@log_error" 2>/dev/null </dev/null | head -n 1)
        DATADIR=$(with_timeout "$@" -N -B -e "SELECT @@datadir" 2>/dev/null </dev/null | head -n 1)
        case "$LOG_ERROR" in
            /*) ERRLOG="$LOG_ERROR" ;;
            ''|stderr) ERRLOG="" ;;
            *) ERRLOG="${DATADIR%/}/${LOG_ERROR#./}" ;;
        esac
        if [ -n "$ERRLOG" ] && [ -r "$ERRLOG" ]; then
            run mysql_error_log mysql_error_log "error log $ERRLOG: last start-up and last $LOG_LINES lines" \
                awk -v max="$LOG_LINES" "$LOG_EXCERPT" "$ERRLOG"
        elif have journalctl; then
            [ -n "$ERRLOG" ] && log "error log $ERRLOG not readable; trying the journal"
            run mysql_error_log mysql_error_log \
                "journalctl -u mariadb -u mysqld -u mysql -n $LOG_LINES --no-pager" \
                journalctl -u mariadb -u mysqld -u mysql -n "$LOG_LINES" --no-pager
        else
            log "mysql error log not found (log_error=$LOG_ERROR)"
        fi
    else
        log "skipped --mysql: no mysql or mariadb client"
    fi
fi

if [ "$WANT_OB" = 1 ]; then
    if SQL_CLIENT=$(pick_client obclient mysql mariadb); then
        SQL_DEFAULTS="$OB_DEFAULTS"
        [ -n "$SQL_DEFAULTS" ] || SQL_DEFAULTS=$(env_defaults_file)
        sql oceanbase_parameters oceanbase_parameters -t \
            "SHOW PARAMETERS WHERE name IN ('cpu_quota_concurrency', 'net_thread_count', 'cpu_count', 'memory_limit', 'memory_limit_percentage', 'system_memory', 'workers_per_cpu_quota', 'large_query_threshold', 'enable_sql_audit')"
        sql sql_audit_plan_types sql_audit_plan_types -t \
            "SELECT plan_type, COUNT(*) AS cnt FROM oceanbase.gv\$sql_audit GROUP BY plan_type ORDER BY plan_type"
        SQL_DEFAULTS="$ODP_DEFAULTS"
        [ -n "$SQL_DEFAULTS" ] || SQL_DEFAULTS=$(env_defaults_file)
        sql odp_proxyconfig odp_proxyconfig -t "SHOW PROXYCONFIG LIKE '%routing%'"
    else
        log "skipped --oceanbase: no obclient, mysql or mariadb client"
    fi
fi

# ---------------------------------------------------------------- redaction

# One awk pass over every collected file: addresses get numbers in order of
# first appearance across all files, so one address is the same ip-N
# everywhere. The mapping lives only in awk's memory.
redact_all() {
    names_file="$WORK/redact-names"
    {
        printf '%s\n' "$HOSTNAME_FQDN" "$HOSTNAME_SHORT" "$UNAME_N" "${HOSTNAME_SHORT%%.*}"
    } | awk 'length($0) > 0 && !seen[$0]++' >"$names_file"
    printf '%s\n' "$REDACT_NAMES" | awk 'length($0) > 0' >"$names_file.extra"
    find "$STAGE" -type f >"$WORK/redact-list"
    # shellcheck disable=SC2016
    awk -v names="$names_file" -v extra="$names_file.extra" -v list="$WORK/redact-list" '
        function octets_ok(s,    n, p, i) {
            n = split(s, p, ".")
            if (n != 4) return 0
            for (i = 1; i <= 4; i++)
                if (length(p[i]) > 3 || p[i] + 0 > 255) return 0
            return 1
        }
        function keep4(s) {
            return s ~ /^127\./ || s == "0.0.0.0" || s ~ /^255\./
        }
        function ip_for(s) {
            if (!(s in ipmap)) ipmap[s] = "ip-" (++nip)
            return ipmap[s]
        }
        function v6_ok(s,    n, g, i, dbl) {
            dbl = index(s, "::") > 0
            n = split(s, g, ":")
            if (!dbl && n != 8) return 0
            if (n < 3 || n > 8) return 0
            if (s ~ /:::/) return 0
            for (i = 1; i <= n; i++) if (length(g[i]) > 4) return 0
            if (s !~ /[0-9a-fA-F]/) return 0
            return 1
        }
        function keep6(s) {
            return s == "::1" || s == "::"
        }
        # Replace IPv4 then IPv6 addresses in line, respecting token borders.
        function ips(line,    out, m, pre, tok, post) {
            out = ""
            while (match(line, /[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/)) {
                pre = substr(line, 1, RSTART - 1)
                tok = substr(line, RSTART, RLENGTH)
                post = substr(line, RSTART + RLENGTH)
                if (pre ~ /[0-9A-Za-z.]$/ || post ~ /^\.[0-9]/ || post ~ /^[0-9A-Za-z]/ || !octets_ok(tok) || keep4(tok))
                    out = out pre tok
                else
                    out = out pre ip_for(tok)
                line = post
            }
            line = out line
            out = ""
            while (match(line, /[0-9a-fA-F]*:[0-9a-fA-F:]*:[0-9a-fA-F]*/)) {
                pre = substr(line, 1, RSTART - 1)
                tok = substr(line, RSTART, RLENGTH)
                post = substr(line, RSTART + RLENGTH)
                if (pre ~ /[0-9A-Za-z_.-]$/ || post ~ /^[0-9A-Za-z_-]/ || !v6_ok(tok) || keep6(tok))
                    out = out pre tok
                else
                    out = out pre ip_for(tok)
                line = post
            }
            return out line
        }
        # Replace name when it stands alone: not inside a longer word, a
        # dotted key (vm.swappiness) or a longer domain name; MySQL derives
        # file names from the host name (NAME.pid, NAME-bin.000001), so those
        # suffixes count as borders too.
        function names_in(line, name, repl,    out, i, pre, post, lp, la) {
            out = ""
            la = length(name)
            while ((i = index(line, name)) > 0) {
                pre = substr(line, 1, i - 1)
                post = substr(line, i + la)
                lp = substr(pre, length(pre), 1)
                if ((lp == "" || lp !~ /[0-9A-Za-z_.-]/) &&
                    (post == "" || post ~ /^[^0-9A-Za-z_.-]/ || post ~ /^\.(pid|err|log|sock)([^0-9A-Za-z_-]|$)/ ||
                     post ~ /^-(bin|relay-bin|slow|relay)([^0-9A-Za-z_]|$|\.)/ || post ~ /^\.$/ || post ~ /^\.[^0-9A-Za-z]/))
                    out = out pre repl
                else
                    out = out pre name
                line = post
            }
            return out line
        }
        BEGIN {
            nn = 0
            # The longest names first, so an FQDN is replaced before its
            # first label.
            while ((getline n < names) > 0) { nn++; nm[nn] = n; rp[nn] = "host-1" }
            close(names)
            h = 1
            while ((getline n < extra) > 0) { nn++; nm[nn] = n; rp[nn] = "host-" (++h) }
            close(extra)
            for (i = 1; i <= nn; i++)
                for (j = i + 1; j <= nn; j++)
                    if (length(nm[j]) > length(nm[i])) {
                        t = nm[i]; nm[i] = nm[j]; nm[j] = t
                        t = rp[i]; rp[i] = rp[j]; rp[j] = t
                    }
            # Files are read here rather than named on the command line: no
            # argument-length limit, no word splitting of odd file names.
            while ((getline f < list) > 0) {
                out = f ".redacted"
                printf "" > out
                while ((getline line < f) > 0) {
                    for (i = 1; i <= nn; i++) line = names_in(line, nm[i], rp[i])
                    print ips(line) > out
                }
                close(f)
                close(out)
            }
            close(list)
        }
    ' || return 1
    while IFS= read -r f; do
        mv "$f.redacted" "$f" || return 1
    done <"$WORK/redact-list"
}

# ---------------------------------------------------------------- manifest

json_array() {
    # one JSON object per line in $1 -> indented array items joined by commas
    sed -e 's/^/    /' -e '$!s/$/,/' "$1"
}

REPORT_HOSTNAME="$HOSTNAME_SHORT"
[ -n "$HOSTNAME_FQDN" ] && case "$HOSTNAME_FQDN" in *.*) REPORT_HOSTNAME="$HOSTNAME_FQDN" ;; esac
[ "$REDACT" = 1 ] && REPORT_HOSTNAME="host-1"

log "finished $(date -u +%Y-%m-%dT%H:%M:%SZ)"

{
    printf '{\n'
    printf '  "collector_version": "%s",\n' "$COLLECTOR_VERSION"
    printf '  "hostname": "%s",\n' "$(json_escape "$REPORT_HOSTNAME")"
    printf '  "time": "%s",\n' "$START_TIME"
    printf '  "user": "%s",\n' "$(json_escape "$USER_NAME")"
    printf '  "privileged": %s,\n' "$PRIVILEGED"
    printf '  "commands": [\n'
    json_array "$CMDS_JSON"
    printf '  ],\n'
    printf '  "files": [\n'
    json_array "$FILES_JSON"
    printf '  ]\n'
    printf '}\n'
} >"$STAGE/manifest.json"

if [ "$REDACT" = 1 ]; then
    redact_all || die "redaction failed; no archive written"
fi

# ----------------------------------------------------------------- archive

if [ -z "$OUTPUT" ]; then
    OUTPUT="./casebook-$(safe_name "$REPORT_HOSTNAME")-$(date -u +%Y%m%dT%H%M%SZ).tar.gz"
fi
# Members are relative (manifest.json, commands/..., proc/...): list them
# explicitly so that no "./" or absolute name gets in. manifest.json goes
# first: a reader streaming the archive knows every file's kind before it
# meets the file.
{
    printf 'manifest.json\n'
    (cd "$STAGE" && ls -A) | awk '$0 != "manifest.json"'
} >"$WORK/members"
if [ "$OUTPUT" = "-" ]; then
    # shellcheck disable=SC2046
    (cd "$STAGE" && tar -cf - $(cat "$WORK/members")) | gzip -c || die "cannot write the archive"
    exit 0
fi
# shellcheck disable=SC2046
if ! (cd "$STAGE" && tar -cf - $(cat "$WORK/members")) | gzip -c >"$OUTPUT.part"; then
    rm -f "$OUTPUT.part"
    die "cannot write $OUTPUT"
fi
mv "$OUTPUT.part" "$OUTPUT" || die "cannot write $OUTPUT"
say "archive written: $OUTPUT"
[ "$QUIET" = 1 ] && printf '%s\n' "$OUTPUT"

# ------------------------------------------------------------------ upload

if [ -n "$UPLOAD_URL" ]; then
    if ! have curl; then
        printf 'collect.sh: --upload needs curl; upload %s by hand\n' "$OUTPUT" >&2
        [ "$KEEP_GOING" = 1 ] && exit 0
        exit 1
    fi
    case "$UPLOAD_URL" in
        */api/v1/snapshots/) ENDPOINT="$UPLOAD_URL" ;;
        */api/v1/snapshots) ENDPOINT="$UPLOAD_URL/" ;;
        *) ENDPOINT="${UPLOAD_URL%/}/api/v1/snapshots/" ;;
    esac
    set -- -sS -o "$WORK/response.json" -w '%{http_code}' -K - -F "file=@$OUTPUT"
    [ -n "$LABEL" ] && set -- "$@" -F "label=$LABEL"
    [ -n "$CLUSTER" ] && set -- "$@" -F "cluster=$CLUSTER"
    # The token goes through curl's config on stdin, never its arguments.
    ESC_TOKEN=$(printf '%s' "$TOKEN" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')
    HTTP_CODE=$(printf 'header = "Authorization: Token %s"\n' "$ESC_TOKEN" | curl "$@" "$ENDPOINT")
    CURL_RC=$?
    case "$HTTP_CODE" in
        2??)
            REPORT_URL=$(tr -d '\n' <"$WORK/response.json" |
                sed -n 's/.*"url"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
            case "$REPORT_URL" in
                /*)
                    ORIGIN=$(printf '%s\n' "$ENDPOINT" | sed -n 's#^\([a-zA-Z][a-zA-Z0-9+.-]*://[^/]*\).*#\1#p')
                    REPORT_URL="$ORIGIN$REPORT_URL"
                    ;;
            esac
            if [ -n "$REPORT_URL" ]; then
                printf '%s\n' "$REPORT_URL"
            else
                say "uploaded (HTTP $HTTP_CODE); the server did not return a report URL"
            fi
            ;;
        *)
            printf 'collect.sh: upload to %s failed (curl exit %s, HTTP %s): %s\n' \
                "$ENDPOINT" "$CURL_RC" "${HTTP_CODE:-none}" "$(head -c 500 "$WORK/response.json" 2>/dev/null)" >&2
            printf 'collect.sh: the archive is kept at %s\n' "$OUTPUT" >&2
            [ "$KEEP_GOING" = 1 ] && exit 0
            exit 1
            ;;
    esac
fi
exit 0
