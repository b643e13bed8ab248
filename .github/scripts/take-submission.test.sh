#!/usr/bin/env bash
# Tests take-submission.sh on a throw-away repository: what a pull request
# from a fork may change, what is taken into the base checkout, and that
# no file name can forge a workflow command. Run by ci.yml:
#   bash .github/scripts/take-submission.test.sh
set -euo pipefail

script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/take-submission.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

sub=data/submissions/ex/v2/full
git init -q -b main r
cd r
git config user.email t@example.org
git config user.name t
mkdir -p "$sub/20260101_old" cmd data/datasets/ex/v2
echo old >"$sub/20260101_old/metadata.toml"
echo old >"$sub/20260101_old/results.jsonl"
echo code >cmd/main.go
echo ds >data/datasets/ex/v2/dataset.toml
echo lock >data/datasets.lock.toml
git add -A
git commit -qm base
base_sha=$(git rev-parse HEAD)

# A submission: a new folder, a logo, a file of another folder removed.
git checkout -qb pr
mkdir -p "$sub/20260202_new" data/logos
echo new >"$sub/20260202_new/metadata.toml"
echo new >"$sub/20260202_new/results.jsonl"
echo png >data/logos/lab.png
git rm -q "$sub/20260101_old/metadata.toml"
git add -A
git commit -qm submission
ok_sha=$(git rev-parse HEAD)

# The same, weakening a dataset, editing the lock and the code.
echo weak >data/datasets/ex/v2/dataset.toml
echo relocked >data/datasets.lock.toml
echo evil >cmd/main.go
git commit -qam tamper
tamper_sha=$(git rev-parse HEAD)

# A link, and a file name that tries to start a workflow command.
git checkout -q "$ok_sha"
ln -s /etc/passwd "$sub/20260202_new/logs.tar.gz"
echo x >"cmd/a
::warning::forged"
git add -A
git commit -qm links
link_sha=$(git rev-parse HEAD)

# The base moves on after the pull request branched.
git checkout -q main
echo newer >cmd/main.go
git commit -qam "base moves"
base_sha=$(git rev-parse HEAD)
cd ..

fresh() {
	rm -rf base
	git clone -q r base
	git -C base checkout -q "$base_sha"
}

echo "== a fork's submission is taken"
fresh
if ! bash "$script" base r "$base_sha" "$ok_sha" true out >log 2>&1; then
	cat log
	fail "a submission from a fork was refused"
fi
[ "$(cat out)" = "$sub/20260101_old
$sub/20260202_new" ] || fail "folders to validate: $(cat out)"
[ "$(cat "base/$sub/20260202_new/results.jsonl")" = new ] || fail "the new results were not taken"
[ -f base/data/logos/lab.png ] || fail "the logo was not taken"
[ ! -e "base/$sub/20260101_old/metadata.toml" ] || fail "the removed file is still there"
[ "$(cat base/cmd/main.go)" = newer ] || fail "the base's code was changed"

echo "== a fork that changes code, a dataset or the lock is refused"
fresh
if bash "$script" base r "$base_sha" "$tamper_sha" true out >log 2>&1; then
	fail "a fork's tampering passed"
fi
for f in cmd/main.go data/datasets/ex/v2/dataset.toml data/datasets.lock.toml; do
	grep -q "^::error file=$f::This pull request comes from a fork and changes $f\." log || fail "no error for $f: $(cat log)"
done

echo "== a branch of the repository: datasets taken, not the lock or the code"
fresh
bash "$script" base r "$base_sha" "$tamper_sha" false out >log 2>&1 || fail "a branch's pull request was refused: $(cat log)"
[ "$(cat base/data/datasets/ex/v2/dataset.toml)" = weak ] || fail "the branch's dataset was not taken (the base's lock must see it)"
[ "$(cat base/data/datasets.lock.toml)" = lock ] || fail "the branch's lock was taken"
[ "$(cat base/cmd/main.go)" = newer ] || fail "the branch's code was taken"
grep -q "^::notice file=cmd/main.go::Not taken" log || fail "no notice for the code: $(cat log)"

echo "== links and forged commands"
fresh
if bash "$script" base r "$base_sha" "$link_sha" true out >log 2>&1; then
	fail "a link passed"
fi
grep -q "^::error file=$sub/20260202_new/logs.tar.gz::.*git mode 120000" log || fail "no error for the link: $(cat log)"
[ ! -L "base/$sub/20260202_new/logs.tar.gz" ] || fail "the link was taken"
if grep -q '^::warning::forged' log; then
	fail "a file name started a workflow command: $(cat log)"
fi
grep -q '^::error file=cmd/a%0A%3A%3Awarning%3A%3Aforged::' log || fail "the odd name is not escaped: $(cat log)"

if [ "$failed" = 1 ]; then
	exit 1
fi
echo "take-submission: all cases pass"
