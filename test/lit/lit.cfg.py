# The golden suite: every .test file drives the real nkicc binary (one behaviour per file).
import os
import lit.formats

config.name = "nkicc"
# A tool that deletes its output on failure (LLVM's -o, a `sed -i`) once turned /dev/null into a
# regular file on a machine running the suite; every later `> /dev/null` then fed a shared file.
# Stop before running anything when that has happened, rather than pass on a broken machine.
import stat
if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
    lit_config.fatal("/dev/null is not a character device (something replaced it): restore it with "
                     "'rm -f /dev/null && mknod -m 666 /dev/null c 1 3' and look for the test that wrote it")
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.nkicc_bin_dir), "test", "lit-out")
config.excludes = ["Inputs"]

# Tests see the build's binary and LLVM's FileCheck/not/split-file first on PATH.
path = os.pathsep.join([config.nkicc_bin_dir, config.llvm_bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
# Diagnostics and logs must not depend on the machine running the suite.
for var in ("NKICC_LOG_LEVEL", "NO_COLOR", "NEURON_PLATFORM_TARGET_OVERRIDE", "NKICC_DMI_PRODUCT_NAME",
            "NKICC_CACHE_DIR", "NKICC_CACHE_MAX_SIZE", "NKICC_REMOTE_CACHE", "NKICC_CACHE_TEST_KILL_MID_WRITE",
            "NKICC_CACHE_TEST_FAIL_WRITE", "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
            "ALL_PROXY"):
    config.environment.pop(var, None)
# No test may read the machine's real DMI name: point it at a file that does not exist.
config.environment["NKICC_DMI_PRODUCT_NAME"] = "/nonexistent/nkicc-test/product_name"
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"

config.substitutions.append(("%expect-exit", "bash " + os.path.join(config.test_source_root, "expect-exit.sh")))
config.substitutions.append(("%nkicc", os.path.join(config.nkicc_bin_dir, "nkicc")))
config.substitutions.append(("%share", config.nkicc_share_dir))
config.substitutions.append(("%scripts", config.nkicc_scripts_dir))
config.substitutions.append(("%srcroot", os.path.dirname(os.path.dirname(config.nkicc_share_dir))))
config.substitutions.append(("%python", config.python))

# MLIR's parser checks --emit=stablehlo (Debian's mlir-19-tools; scripts/bootstrap.sh installs it).
mlir_opt = "/usr/lib/llvm-19/bin/mlir-opt"
config.substitutions.append(("%mlir-opt", mlir_opt))
if os.path.exists(mlir_opt):
    config.available_features.add("mlir-opt")

if os.path.exists(config.python):
    config.available_features.add("python3")
if config.nkicc_sanitize:
    config.available_features.add("sanitize")
# Character devices made in a test's own folder (/dev/null's and /dev/full's numbers), for outputs
# onto devices; only where this user may create device nodes.
import subprocess, tempfile
with tempfile.TemporaryDirectory() as probe:
    if subprocess.call(["mknod", os.path.join(probe, "null"), "c", "1", "3"], stderr=subprocess.DEVNULL) == 0:
        config.available_features.add("mknod")
# A device whose writes fail with ENOSPC, for output errors part way through.
if os.path.exists("/dev/full"):
    config.available_features.add("dev-full")

# The remote cache tests start real servers on loopback (scripts/bootstrap.sh installs them);
# without the binary such a test is reported unsupported.
import shutil
import subprocess
for server, feature in (("redis-server", "redis-server"), ("nginx", "nginx")):
    if shutil.which(server) or os.path.exists("/usr/sbin/" + server):
        config.available_features.add(feature)
config.environment["PATH"] += os.pathsep + "/usr/sbin"
# A size-limited tmpfs in a private mount namespace, for a real full disk (root only).
try:
    if subprocess.call(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30) == 0:
        config.available_features.add("tmpfs-mount")
except (OSError, subprocess.SubprocessError):
    pass
# make, for the depfile test that runs a Makefile.
if shutil.which("make"):
    config.available_features.add("make")
# Debian's python3-jsonschema, for the test of share/nkicc's JSON Schemas (scripts/bootstrap.sh installs it).
if os.path.exists(config.python) and subprocess.run([config.python, "-c", "import jsonschema"],
                                                    capture_output=True).returncode == 0:
    config.available_features.add("jsonschema")
