#!/usr/bin/env bash
# Install what the distributed KVStore tests need: an MPI runtime (Open MPI) and mpi4py.
# Idempotent: does nothing that is already there.  Called by .ci/run.
set -euo pipefail

if ! command -v mpirun >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
fi

if ! python -c "import mpi4py" >/dev/null 2>&1; then
  python -m pip install "mpi4py>=3.1"
fi

mpirun --version | head -n 1
python -c "import mpi4py; print('mpi4py', mpi4py.__version__)"
