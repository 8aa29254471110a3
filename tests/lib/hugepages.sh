# shellcheck shell=bash
# 2 MiB huge pages reserved for a test's run (rdma-core's suite skips its huge-page tests
# when the pool is empty). The kernel has one pool per machine and other tests may run at
# the same time, so the runs that need it share it: each holds a claim (a file named by its
# PID) in HP_DIR; the first claim records the pool's size and grows it, the last release
# puts the recorded size back, and claims of processes that are gone are dropped. All of
# it under flock on HP_DIR/lock. Needs tests/lib/runner.sh (on_exit).
HP_DIR=${HP_DIR:-/run/blue-hugepages}
HP_SYS=${HP_SYS:-/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages}
HP_FREE=${HP_FREE:-${HP_SYS%/*}/free_hugepages}
HP_SPARE_KB=1048576	# memory left available besides the pages (1 GiB)
export HP_WHY=	# why hugepages_reserve did not (its callers read it)

# _hp_reap: drop the claims of processes that are gone (under the lock)
_hp_reap() {
	local f
	for f in "$HP_DIR"/claim.*; do
		[ -e "$f" ] || continue
		kill -0 "${f##*.}" 2>/dev/null || rm -f "$f"
	done
}

# hugepages_reserve N: at least N 2 MiB pages in the pool while this process runs, the
# pool's size put back at exit (on_exit). Return: 0, or 1 with HP_WHY saying why not.
hugepages_reserve() {
	local n=$1 avail_kb have nr want
	HP_WHY=
	if [ ! -w "$HP_SYS" ]; then
		HP_WHY="$HP_SYS is not writable: no 2 MiB huge page size here, or not root"
		return 1
	fi
	avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	if [ "$avail_kb" -lt $((n * 2048 + HP_SPARE_KB)) ]; then
		HP_WHY="$((avail_kb / 1024)) MiB available: no room for $n 2 MiB pages and 1 GiB spare"
		return 1
	fi
	mkdir -p "$HP_DIR" || { HP_WHY="cannot make $HP_DIR"; return 1; }
	HP_ME=$BASHPID	# the test's own process (runner.sh runs each in a subshell)
	on_exit hugepages_release
	(
		flock 9
		_hp_reap
		[ -e "$HP_DIR/orig" ] || cat "$HP_SYS" >"$HP_DIR/orig"
		: >"$HP_DIR/claim.$HP_ME"
		# N free pages: other processes (blue's own UMEMs take 2 MiB pages when the pool
		# has them) may hold some of the pool already
		nr=$(cat "$HP_SYS")
		want=$((nr - $(cat "$HP_FREE") + n))
		[ "$nr" -ge "$want" ] || echo "$want" >"$HP_SYS"
	) 9>"$HP_DIR/lock"
	have=$(cat "$HP_FREE")
	if [ "$have" -lt "$n" ]; then
		HP_WHY="asked the kernel for $n free 2 MiB pages, it has $have (memory fragmented, or taken)"
		return 1
	fi
	echo "huge pages: $have of 2 MiB free in a pool of $(cat "$HP_SYS") (was $(cat "$HP_DIR/orig"))"
}

# hugepages_release: this process's claim dropped; the last claim puts the pool back
hugepages_release() {
	(
		flock 9
		rm -f "$HP_DIR/claim.${HP_ME:-none}"
		_hp_reap
		if ! compgen -G "$HP_DIR/claim.*" >/dev/null && [ -e "$HP_DIR/orig" ]; then
			cat "$HP_DIR/orig" >"$HP_SYS"
			rm -f "$HP_DIR/orig"
			echo "huge pages: the pool is back to $(cat "$HP_SYS")"
		fi
	) 9>"$HP_DIR/lock"
}
