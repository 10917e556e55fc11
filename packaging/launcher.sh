#!/bin/sh
# The `pi-events` command of the npm package pi-events. It finds this platform's package
# (@pi-events/<os>-<arch>[-musl], installed by npm through optionalDependencies) and execs its
# native binary: no Node process stands between the caller and pi-events.
self=$0
# Follow npm's bin symlink(s) back to this file inside the package.
while [ -L "$self" ]; do
	link=$(readlink "$self")
	case $link in
	/*) self=$link ;;
	*) self=${self%/*}/$link ;;
	esac
done
case $self in
/*) ;;
*) self=$PWD/$self ;;
esac

# Few processes on purpose (this runs before every pi-events command): readlink, one uname,
# no dirname or pwd.
machine=$(uname -sm)
case $machine in
Linux\ *) os=linux ;;
Darwin\ *) os=darwin ;;
*) echo "pi-events: no build for $machine (Linux and macOS only)" >&2; exit 2 ;;
esac
case $machine in
*\ x86_64 | *\ amd64) arch=x64 ;;
*\ aarch64 | *\ arm64) arch=arm64 ;;
*) echo "pi-events: no build for $machine (x64 and arm64 only)" >&2; exit 2 ;;
esac
names="$os-$arch"
if [ "$os" = linux ]; then
	# glibc's loader present: prefer the glibc build; otherwise (Alpine) the musl one.
	if [ -e /lib64/ld-linux-x86-64.so.2 ] || [ -e /lib/ld-linux-aarch64.so.1 ]; then
		names="$os-$arch $os-$arch-musl"
	else
		names="$os-$arch-musl $os-$arch"
	fi
fi

# Node's lookup, from this file's directory up: the package's own node_modules (nested install),
# then each parent's (hoisted: <prefix>/lib/node_modules/@pi-events/...).
dir=${self%/*}
while :; do
	for name in $names; do
		bin=$dir/node_modules/@pi-events/$name/bin/pi-events
		if [ -x "$bin" ]; then exec "$bin" "$@"; fi
	done
	case $dir in
	*/*) dir=${dir%/*} ;;
	*) break ;;
	esac
done
echo "pi-events: the package @pi-events/${names%% *} is not installed (npm skips it with --omit=optional);" \
	"reinstall pi-events with optional dependencies, or put a release binary on PATH" >&2
exit 2
