{
  "targets": [
    {
      "target_name": "rlvr_native",
      "sources": [
        "native/addon.cc",
        "native/thread-pool.cc",
        "native/matmul.cc",
        "native/microkernel-avx512.cc",
        "native/elementwise.cc",
        "native/rows.cc",
        "native/attention.cc",
        "native/misc.cc",
        "native/peak.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc!": ["-fno-exceptions", "-O2", "-O0", "-std=gnu++17", "-std=gnu++1y"],
      "cflags": ["-O3", "-mavx2", "-mfma", "-fno-math-errno", "-pthread"],
      "cflags_cc": ["-O3", "-mavx2", "-mfma", "-fno-math-errno", "-std=c++17", "-pthread"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "OTHER_CFLAGS": ["-O3", "-mavx2", "-mfma"],
        "OTHER_CPLUSPLUSFLAGS": ["-O3", "-mavx2", "-mfma", "-std=c++17"]
      }
    }
  ]
}
