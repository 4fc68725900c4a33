#!/usr/bin/env bash
# Checks the system tools the kit needs outside Python, and installs them when it can.
#
#   - Python 3.11+ (the interpreter `make` builds .venv from; $PYTHON, default python3)
#   - Java 17+ for PySpark 4 ($JAVA_HOME/bin/java if JAVA_HOME is set, else `java` on PATH)
#   - Graphviz `dot`, which the graphviz Python package calls to render diagrams
#
# When a tool is missing and we run as root on a machine with apt-get (CI, containers),
# it is installed with apt-get. Otherwise the script stops and says what to install.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
apt_updated=0

say() { printf 'check_system: %s\n' "$*"; }
die() { printf '\ncheck_system: ERROR: %s\n\n' "$*" >&2; exit 1; }

can_apt() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if [ "$apt_updated" -eq 0 ]; then
        say "apt-get update"
        apt-get update -q >/dev/null
        apt_updated=1
    fi
    say "apt-get install -y $*"
    apt-get install -y -q "$@" >/dev/null
}

# --- Python -------------------------------------------------------------------------
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    die "the kit needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" --version 2>&1 || echo 'not found').
Install Python 3.11+ and run: make PYTHON=/path/to/python3.11 ..."
fi

# --- Java 17+ -------------------------------------------------------------------------
java_cmd() {
    if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME/bin/java"; else command -v java || true; fi
}

# Major version of the given java: "17.0.15" -> 17, "1.8.0_392" -> 8; empty if none.
java_major() {
    local cmd="$1" version
    [ -n "$cmd" ] && [ -x "$cmd" ] || return 0
    version="$("$cmd" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')"
    case "$version" in
        1.*) echo "$version" | cut -d. -f2 ;;
        *) echo "$version" | cut -d. -f1 | cut -d- -f1 ;;
    esac
}

java_ok() {
    local major
    major="$(java_major "$(java_cmd)")"
    [ -n "$major" ] && [ "$major" -ge 17 ] 2>/dev/null
}

if ! java_ok; then
    found="$(java_major "$(java_cmd)")"
    say "Java 17+ not found (found: ${found:-none}${JAVA_HOME:+, JAVA_HOME=$JAVA_HOME})"
    if can_apt && [ -z "${JAVA_HOME:-}" ]; then
        mkdir -p /usr/share/man/man1  # slim Debian images lack it and the JRE's postinst needs it
        apt_install --no-install-recommends openjdk-17-jdk-headless \
            || apt_install --no-install-recommends default-jdk-headless
    fi
    java_ok || die "PySpark 4 needs Java 17 or newer (found: ${found:-none}).
Install it, for example:
    sudo apt-get install openjdk-17-jre-headless      # Debian / Ubuntu
    brew install openjdk@17                           # macOS
    conda install -c conda-forge openjdk=17           # conda
and make sure 'java -version' (or \$JAVA_HOME/bin/java) reports 17 or newer."
fi
say "java $(java_major "$(java_cmd)") ok ($(java_cmd))"
# javac compiles the Java consumer driver that tests/test_real_kafka.py runs against Apache Kafka
# and the kit; a JRE alone has none (that test case is then skipped with its reason).
if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ] && can_apt; then
    apt_install --no-install-recommends openjdk-17-jdk-headless \
        || apt_install --no-install-recommends default-jdk-headless \
        || say "WARNING: could not install a JDK; the Java driver test will be skipped"
fi

# --- Graphviz dot ---------------------------------------------------------------------
if ! command -v dot >/dev/null 2>&1; then
    say "Graphviz 'dot' not found"
    if can_apt; then
        apt_install graphviz
    fi
    command -v dot >/dev/null 2>&1 || die "the diagrams need the Graphviz 'dot' program (the pip package
'graphviz' is only the Python wrapper). Install it, for example:
    sudo apt-get install graphviz                     # Debian / Ubuntu
    brew install graphviz                             # macOS
    conda install -c conda-forge graphviz             # conda"
fi
say "$(dot -V 2>&1 | head -n1) ok"

# --- Maven (optional: real Apache Kafka for tests/test_real_kafka.py) -------------------
# `python -m coordinator_kit kafka fetch` resolves Kafka's jars from Maven Central with mvn,
# once, into ~/.cache/coordinator_kit/; without mvn (and no such cache) those tests skip.
if ! command -v mvn >/dev/null 2>&1; then
    say "Maven 'mvn' not found (only needed to fetch real Apache Kafka for its comparison tests)"
    if can_apt; then
        apt_install --no-install-recommends maven \
            || say "WARNING: could not install maven; the real-Kafka tests will be skipped"
    fi
fi
if command -v mvn >/dev/null 2>&1; then
    say "$(mvn -v 2>/dev/null | head -n1 | sed 's/\x1b\[[0-9;]*m//g') ok"
else
    say "no mvn: tests/test_real_kafka.py will be skipped (install maven to run them)"
fi
