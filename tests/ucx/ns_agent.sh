#!/bin/sh
# The launch agent mpirun's rsh launcher calls (--mca plm_rsh_agent) to start its daemon
# on another "host": here a network namespace of this machine. mpirun calls it as
# `ns_agent.sh HOST WORD...`, WORD... being the daemon's command line (an ssh agent would
# hand it to the remote shell the same way). HOST is an address; BLUE_NS_HOSTS maps it to
# its namespace and a host name ("IP=NS=NAME ..."), and the daemon runs in that namespace
# with a UTS namespace of its own named NAME, so that the ranks of two namespaces do not
# look like one node (one hostname) to Open MPI. The agent's PID (the daemon's, after the
# exec) is appended to BLUE_NS_PIDS so that the test can end it by PID.
set -eu
host=$1
shift
for e in $BLUE_NS_HOSTS; do
	ip=${e%%=*}
	rest=${e#*=}
	if [ "$ip" = "$host" ]; then
		ns=${rest%%=*}
		name=${rest#*=}
		echo $$ >>"$BLUE_NS_PIDS"
		# the words are one shell command line, as ssh would run them
		exec "$(dirname "$0")/ns_enter.sh" "$ns" "$name" sh -c "$*"
	fi
done
echo "ns_agent.sh: host $host is in none of BLUE_NS_HOSTS ($BLUE_NS_HOSTS)" >&2
exit 1
