#!/usr/bin/env bash
# Bazel workspace status: the git commit (and whether the tree is dirty),
# stamped into //core:build_info.
commit="$(git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)"
if [[ "$commit" != unknown ]] && ! git diff --quiet HEAD 2>/dev/null; then
  commit="${commit}-dirty"
fi
echo "STABLE_GIT_COMMIT ${commit}"
