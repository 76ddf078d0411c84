#!/usr/bin/python3
"""pysuite-driver.py - CPython's own regression tests inside an MPI process.

usage: pysuite-driver.py PREFIX OUT MODULE...

Runs the test modules (test_os, test_shutil, ...: the packages of
libpython3.X-testsuite) with unittest in one MPI process, for t/4370: once
natively and once under libscr_preload.so, whose PRELOAD rules route the
suite's temporary files into node-local cache, so that a test whose outcome
differs names a call the preload does not answer as the C library would.

MPI_Init runs first, so the preload's engine starts (the layer routes nothing
before it). Then the process works in PREFIX/work (where os_helper.TESTFN,
'@test_<pid>_tmp...', lands: it is relative) with TMPDIR=PREFIX/tmp (where
tempfile, and the tests that make their own directories, put theirs).
Rank 0 writes one line per test to OUT, 'OUTCOME test-id' with OUTCOME one
of ok, FAIL, ERROR, skip, xfail, xpass; a test any of whose subtests failed
is FAIL (or ERROR); an error outside a test is one of MODULE:import,
CLASS:setUpClass and the like. OUT.log gets unittest's verbose output with every
traceback, to tell what a differing test did.

MPI comes from mpi4py when it is built for MPICH's ABI (the one the preload
wraps); Debian's python3-mpi4py links Open MPI, whose MPI_Init would not
start the engine (the layer says it runs unprotected), so then MPICH's
libmpi is loaded here with ctypes and its MPI_Init called through the
process's global namespace, where LD_PRELOAD's wrapper comes first.
"""

import ctypes
import faulthandler
import os
import sys
import time
import unittest

# a test that hangs ends the run with every thread's stack in OUT.log
# rather than at the harness's time limit with nothing said
TEST_TIMEOUT = int(os.environ.get("PYSUITE_TEST_TIMEOUT", "300"))


def mpi_start():
    """MPI_Init of MPICH's ABI; returns (rank, finalize)."""
    try:
        import mpi4py
        ext = os.path.join(os.path.dirname(mpi4py.__file__), "MPI" + _ext_suffix())
        with open(ext, "rb") as f:
            needed = f.read()
        mpich = b"libmpich.so" in needed or b"libmpi.so.12" in needed
    except (ImportError, OSError):
        mpich = False
    if mpich:
        from mpi4py import MPI
        return MPI.COMM_WORLD.Get_rank(), MPI.Finalize
    # RTLD_GLOBAL: the preload finds the PMPI_ entry points after its own
    ctypes.CDLL(os.environ.get("PYSUITE_LIBMPI", "libmpich.so.12"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    world = ctypes.CDLL(None)
    if world.MPI_Init(None, None) != 0:
        sys.exit("pysuite-driver: MPI_Init failed")
    rank = ctypes.c_int(-1)
    # MPI_COMM_WORLD of MPICH's ABI
    world.MPI_Comm_rank(ctypes.c_int(0x44000000), ctypes.byref(rank))
    return rank.value, lambda: world.MPI_Finalize()


def _ext_suffix():
    import sysconfig
    return sysconfig.get_config_var("EXT_SUFFIX")


def test_id(test):
    """test.id() without blanks: an error of a class's or module's set-up
    ('setUpClass (test.test_os.TestSendfile)') becomes
    'test.test_os.TestSendfile:setUpClass'."""
    tid = test.id()
    if " (" in tid and tid.endswith(")"):
        what, owner = tid[:-1].split(" (", 1)
        tid = "%s:%s" % (owner, what)
    return tid.replace(" ", "_")


class Outcomes(unittest.TextTestResult):
    """unittest's verbose result, which also keeps each test's outcome."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcome = {}
        self.order = []

    def _set(self, test, what):
        tid = test_id(test)
        if tid not in self.outcome:
            self.order.append(tid)
        # a failed subtest or a failing tearDown outranks the pass
        rank = ["ok", "skip", "xfail", "xpass", "FAIL", "ERROR"]
        old = self.outcome.get(tid)
        if old is None or rank.index(what) > rank.index(old):
            self.outcome[tid] = what

    def startTest(self, test):
        faulthandler.dump_traceback_later(TEST_TIMEOUT, exit=True, file=self.stream.stream)
        super().startTest(test)

    def stopTest(self, test):
        faulthandler.cancel_dump_traceback_later()
        super().stopTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "FAIL")

    def addError(self, test, err):
        super().addError(test, err)
        # an error in setUpModule/setUpClass comes as a _ErrorHolder
        self._set(test, "ERROR")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skip")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._set(test, "FAIL" if issubclass(err[0], test.failureException) else "ERROR")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    prefix, out, modules = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    rank, finalize = mpi_start()

    work, tmp = os.path.join(prefix, "work"), os.path.join(prefix, "tmp")
    os.makedirs(work, exist_ok=True)
    os.makedirs(tmp, exist_ok=True)
    os.chdir(work)
    os.environ["TMPDIR"] = tmp
    # regrtest's defaults: no optional resource (-u) enabled, umask 022
    os.umask(0o022)
    import tempfile
    tempfile.tempdir = None
    from test import support
    support.use_resources = []
    support.verbose = 0

    log = open(out + (".log" if rank == 0 else ".log.%d" % rank), "w")
    runner = unittest.TextTestRunner(stream=log, verbosity=2, resultclass=Outcomes)
    outcomes, order = {}, []
    start = time.monotonic()
    for name in modules:
        print("== %s" % name, file=log, flush=True)
        try:
            suite = unittest.defaultTestLoader.loadTestsFromName("test." + name)
        except Exception as e:   # a module that does not import counts as one error
            outcomes["test.%s:import" % name] = "ERROR"
            order.append("test.%s:import" % name)
            print("import of test.%s failed: %r" % (name, e), file=log, flush=True)
            continue
        result = runner.run(suite)
        for tid in result.order:
            if tid not in outcomes:
                order.append(tid)
            outcomes[tid] = result.outcome[tid]
        log.flush()
    print("== %d tests in %.1f s" % (len(order), time.monotonic() - start), file=log, flush=True)
    log.close()
    if rank == 0:
        with open(out, "w") as f:
            for tid in order:
                f.write("%s %s\n" % (outcomes[tid], tid))
    finalize()


if __name__ == "__main__":
    main()
