#!/usr/bin/env bash
# Run on a Debian 12 machine with network: downloads Debian's Open MPI (runtime, headers, and
# the libraries they load) into .mpi/debs and unpacks them into .mpi/root, for a machine without
# mpirun and without network (bench/mpi.sh picks .mpi/root up). .mpi/ is git-ignored; carry it
# (about 40 MiB unpacked).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libhwloc15 libevent-core-2.1-7
      libevent-pthreads-2.1-7 libpmix2 libfabric1 libibverbs1 librdmacm1 libucx0 libpsm2-2
      libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1 libltdl7 libmunge2 libxnvctrl0
      libpciaccess0 libx11-6 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0"
mkdir -p .mpi/debs .mpi/root
( cd .mpi/debs && apt-get download $pkgs )
for d in .mpi/debs/*.deb; do dpkg -x "$d" .mpi/root; done
# the documentation is not needed there
rm -rf .mpi/root/usr/share/doc .mpi/root/usr/share/man .mpi/root/usr/lib/x86_64-linux-gnu/fortran
du -sh .mpi/root
