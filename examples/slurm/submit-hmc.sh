#!/bin/sh
# C independent HMC chains of N iterations on a Slurm cluster, as a job array
# of hmc-chain.sbatch (seed = task number), each chain continued by jobs of
# its own until it has N rows, then summarised together (OUT/summary.txt).
# Prints the array's job id; the chains are OUT/chain-i.txt, the jobs' logs
# OUT/chain-i-JOB.log.
#
# Usage: submit-hmc.sh C N X Y OUT
# Environment: HMC_SECONDS, HMC_MARGIN, HMC_FLAGS (see hmc-chain.sbatch);
# SBATCH_* for sbatch (e.g. SBATCH_TIMELIMIT=4:00:00).  OUT and the data must
# be on a file system the nodes share.
set -eu
[ $# -eq 5 ] || { echo "usage: submit-hmc.sh C N X Y OUT" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$5"
job=$(sbatch --parsable --array="1-$1" --output="$5/chain-%a-%j.log" "$here/hmc-chain.sbatch" "$@")
echo "${job%%;*}"
