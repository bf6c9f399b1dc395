# native_bench links libkgc-native, the native-call bridge's own library
# (lib/native/, on top of libkgc): the bridge's archive, then libkgc again
# (the bridge uses it; kgc.flags put libkgc.a first), then libffi/libdl.
LIBKGC_NATIVE := $(LIBDIR)/build/rel/libkgc-native.a
LDLIBS_native_bench = $(wildcard $(LIBKGC_NATIVE)) $(LIBKGC) -lffi -ldl

$(OUT)/native_bench: $(LIBKGC_NATIVE)

$(LIBKGC_NATIVE): FORCE
	@$(MAKE) --no-print-directory -C $(LIBDIR) build/rel/libkgc-native.a >$(OUT)/lib-native-build.log 2>&1 \
		|| echo "bench: libkgc-native did not build (see bench/$(OUT)/lib-native-build.log)"
