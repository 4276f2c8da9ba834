"""Repository rule that finds a CUDA toolkit and exposes it as @local_cuda.

With a toolkit at $CUDA_PATH or /usr/local/cuda (and CNNBENCH_NO_CUDA unset),
@local_cuda has cudart, cublas, cublasLt, cudnn and nccl libraries and
defs.bzl's `cuda_library` compiles .cu files with nvcc. Without one, the
repository is empty but loadable: `if_cuda(x, y)` returns y and GPU targets
drop out of the build.
"""

_LIBS = {
    "cudart": "cudart",
    "cublas": "cublas",
    "cublasLt": "cublasLt",
    "cudnn": "cudnn",
    "nccl": "nccl",
}

def _find_lib(ctx, root, name):
    for d in ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"]:
        p = ctx.path(root + "/" + d + "/lib" + name + ".so")
        if p.exists:
            return d
    return None

def _cuda_configure_impl(ctx):
    hide = ctx.os.environ.get("CNNBENCH_NO_CUDA", "")
    root = ctx.os.environ.get("CUDA_PATH", "") or "/usr/local/cuda"
    nvcc = ctx.path(root + "/bin/nvcc")
    found = hide in ["", "0"] and nvcc.exists
    reason = ""
    if hide not in ["", "0"]:
        reason = "hidden by CNNBENCH_NO_CUDA=" + hide
    elif not nvcc.exists:
        reason = "no nvcc at " + str(nvcc)

    libdirs = {}
    if found:
        for lib in _LIBS.values():
            d = _find_lib(ctx, root, lib)
            if d == None:
                found = False
                reason = "lib" + lib + ".so not found under " + root
                break
            libdirs[lib] = d

    if not found:
        ctx.file("BUILD.bazel", "# CUDA not found: " + reason + "\npackage(default_visibility = [\"//visibility:public\"])\n")
        ctx.template("defs.bzl", Label("//third_party/cuda:defs.bzl.tpl"), {
            "%{found}": "False",
            "%{nvcc}": "",
            "%{reason}": reason,
            "%{root}": "",
        })
        return

    ctx.symlink(root + "/include", "include")
    ctx.symlink(root + "/bin", "bin")
    lib_rules = []
    for name, lib in _LIBS.items():
        d = libdirs[lib]
        ctx.symlink(root + "/" + d + "/lib" + lib + ".so", "lib/lib" + lib + ".so")
        lib_rules.append(
            'cc_library(name = "%s", srcs = ["lib/lib%s.so"], deps = [":headers"])' % (name, lib),
        )
    ctx.template("BUILD.bazel", Label("//third_party/cuda:BUILD.local_cuda.tpl"), {
        "%{root}": root,
        "%{libs}": "\n\n".join(lib_rules),
    })
    ctx.template("defs.bzl", Label("//third_party/cuda:defs.bzl.tpl"), {
        "%{found}": "True",
        "%{nvcc}": str(nvcc),
        "%{reason}": "found at " + root,
        "%{root}": root,
    })

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH", "CNNBENCH_NO_CUDA"],
    local = True,
)
