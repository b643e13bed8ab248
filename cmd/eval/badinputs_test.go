package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputs: bad flags, prediction fields and configuration, of the
// kinds issue 29 found accepted silently, each refused with a clear
// error (the file, line and field where there is one) before anything
// runs. No Docker engine is needed: each is refused first.
func TestBadInputs(t *testing.T) {
	root := copyProject(t)
	cfgPath := filepath.Join(root, "featbench.toml")
	cfgRaw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/featbench-bad-inputs.sock") // nothing may get as far as the engine
	const lv1 = "featbench__textkit.test_roman.0e26fade.lv1"
	pred := func(fields string) string {
		return `{"instance_id": "` + lv1 + `", "model_name_or_path": "m", "model_patch": ""` + fields + "}\n"
	}
	run := []string{"run", "--root", root, "--dataset", "example/v4", "--split", "lite", "--run-id", "bad"}
	type tc struct {
		name   string
		args   []string // after eval; "PREDS" is the predictions file
		preds  string   // written to PREDS when not empty
		config string   // a line added to [eval], when not empty
		code   int
		want   string
	}
	var cases []tc
	flag := func(name string, code int, want string, extra ...string) {
		cases = append(cases, tc{name: name, args: append(append([]string{}, run...), append([]string{"--gold"}, extra...)...), code: code, want: want})
	}
	// Flags of eval run.
	for _, w := range []string{"0", "-1", "257", "100000"} {
		flag("--workers "+w, 2, "--workers "+w+": want 1 to 256", "--workers", w)
	}
	flag("--workers two", 2, "invalid value", "--workers", "two")
	for _, d := range []string{"0", "-1s", "0s"} {
		flag("--timeout "+d, 2, "want a positive duration", "--timeout", d)
	}
	flag("--timeout soon", 2, "invalid value", "--timeout", "soon")
	for _, a := range []string{"0", "-1", "101"} {
		flag("--attempts "+a, 2, "want 1 to 100", "--attempts", a)
	}
	flag("--attempts x", 2, "invalid value", "--attempts", "x")
	flag("an unknown flag", 2, "flag provided but not defined", "--frobnicate")
	flag("--gold and --empty", 2, "give exactly one of", "--empty")
	flag("an unknown instance", 1, "nope", "--instance", "nope")
	for _, id := range []string{"", "../x", "a b", ".hidden", "x/y", strings.Repeat("r", 101), "-x"} {
		cases = append(cases, tc{name: fmt.Sprintf("run id %q", id), args: []string{"run", "--root", root, "--dataset", "example/v4", "--gold", "--run-id", id}, code: 2, want: "--run-id"})
	}
	for _, ds := range []string{"", "example", "example/v99", "../x/v1"} {
		args := []string{"run", "--root", root, "--gold", "--run-id", "bad"}
		if ds != "" {
			args = append(args, "--dataset", ds)
		}
		cases = append(cases, tc{name: fmt.Sprintf("dataset %q", ds), args: args, code: map[bool]int{true: 2, false: 1}[ds == ""], want: "dataset"})
	}
	cases = append(cases, tc{name: "an unknown split", args: []string{"run", "--root", root, "--dataset", "example/v4", "--split", "nosplit", "--gold", "--run-id", "bad"}, code: 1, want: "nosplit"},
		tc{name: "no predictions", args: []string{"run", "--root", root, "--dataset", "example/v4", "--run-id", "bad"}, code: 2, want: "give exactly one of"},
		tc{name: "a stray argument", args: append(append([]string{}, run...), "--gold", "extra"), code: 2, want: "unexpected arguments"})

	// Prediction files: every field, by file, line and field.
	predCase := func(name, content, want string) {
		cases = append(cases, tc{name: "predictions: " + name, args: append(append([]string{}, run...), "--predictions", "PREDS"), preds: content, code: 1, want: want})
	}
	predCase("a missing model", `{"instance_id": "`+lv1+`", "model_patch": ""}`+"\n", `preds.jsonl:1: field "model_name_or_path": is missing`)
	predCase("an empty model", `{"instance_id": "`+lv1+`", "model_patch": "", "model_name_or_path": ""}`+"\n", `preds.jsonl:1: field "model_name_or_path": is missing`)
	predCase("two models", pred("")+`{"instance_id": "featbench__textkit.test_slug.25585a9f.lv2", "model_name_or_path": "n", "model_patch": ""}`+"\n", `preds.jsonl:2: field "model_name_or_path": is "n", but line 1's is "m"`)
	predCase("a 20 MB model name", `{"instance_id": "`+lv1+`", "model_patch": "", "model_name_or_path": "`+strings.Repeat("m", 20<<20)+`"}`+"\n", `preds.jsonl:1: field "model_name_or_path": is 20971520 characters long`)
	predCase("a model name over lines", pred(`, "model": "x"`)[:0]+`{"instance_id": "`+lv1+`", "model_patch": "", "model_name_or_path": "a\nb"}`+"\n", `spans lines`)
	predCase("an attempt beyond --attempts", pred(`, "attempt": 5`), `preds.jsonl:1: field "attempt": is 5, but --attempts is 1`)
	predCase("an n_attempt beyond --attempts", pred(`, "n_attempt": 2`), `field "attempt": is 2, but --attempts is 1`)
	for _, f := range []struct{ name, fields, want string }{
		{"a numeric patch", `, "model_patch": 1`, `field "model_patch": is given twice`},
		{"tokens_in negative", `, "tokens_in": -1`, `field "tokens_in": is negative`},
		{"tokens_in fractional", `, "tokens_in": 1.5`, `field "tokens_in": is 1.5, not a whole number`},
		{"tokens_in huge", `, "tokens_in": 2e12`, `field "tokens_in": is 2000000000000, over the limit`},
		{"tokens_in a string", `, "tokens_in": "10k"`, `field "tokens_in": is a JSON string`},
		{"tokens_out negative", `, "tokens_out": -2`, `field "tokens_out": is negative`},
		{"tokens_out a list", `, "tokens_out": [1]`, `field "tokens_out": is a JSON list`},
		{"cost negative", `, "cost": -0.1`, `field "cost": is negative`},
		{"cost infinite", `, "cost": 1e999`, `field "cost"`},
		{"cost a string", `, "cost": "NaN"`, `field "cost": is a JSON string`},
		{"cost huge", `, "cost": 2e6`, `field "cost"`},
		{"attempt 0", `, "attempt": 0`, `field "attempt"`},
		{"attempt -1", `, "attempt": -1`, `field "attempt"`},
		{"attempt 101", `, "attempt": 101`, `field "attempt"`},
		{"attempt fractional", `, "attempt": 1.5`, `field "attempt"`},
		{"attempt a string", `, "attempt": "1"`, `field "attempt": is a JSON string`},
		{"attempt and n_attempt disagree", `, "attempt": 1, "n_attempt": 2`, `field "attempt": is 1 but n_attempt is 2`},
		{"success a string", `, "success": "no"`, `field "success"`},
		{"turns negative", `, "turns": -1`, `field "turns": is negative`},
		{"duration a string", `, "duration": "1s"`, `field "duration": is a JSON string`},
		{"measured a string", `, "measured": "yes"`, `field "measured": is a JSON string`},
		{"measured without figures", `, "measured": true, "trajectory": "t.jsonl"`, `field "measured": is true but tokens_in`},
		{"measured without a trajectory", `, "measured": true, "tokens_in": 1, "tokens_out": 1, "turns": 1`, `field "measured": is true but trajectory does not name the file`},
		{"a key in another case", `, "Model_Patch": "x"`, `field "Model_Patch": differs from the field "model_patch" only in case`},
		{"a test_result that is no object", `, "test_result": "diff"`, `field "test_result"`},
		{"a git_patch that is no string", `, "test_result": {"git_patch": 3}`, `field "test_result.git_patch"`},
		{"failure_mode a number", `, "failure_mode": 3`, `field "failure_mode": is a JSON number`},
		{"error a list", `, "error": []`, `field "error": is a JSON list`},
	} {
		predCase(f.name, pred(f.fields), "preds.jsonl:1: "+f.want)
	}
	predCase("an instance of another dataset", `{"instance_id": "astropy__astropy-1", "model_name_or_path": "m", "model_patch": ""}`+"\n", "predictions for another dataset?")
	predCase("a missing instance_id", `{"model_name_or_path": "m", "model_patch": ""}`+"\n", `preds.jsonl:1: field "instance_id": is missing`)
	predCase("a null instance_id", `{"instance_id": null, "model_name_or_path": "m", "model_patch": ""}`+"\n", `field "instance_id": is missing`)
	predCase("a numeric instance_id", `{"instance_id": 7, "model_name_or_path": "m", "model_patch": ""}`+"\n", `field "instance_id": is a JSON number`)
	predCase("an instance_id that is a path", `{"instance_id": "../x", "model_name_or_path": "m", "model_patch": ""}`+"\n", `field "instance_id"`)
	predCase("two predictions of one attempt", pred("")+pred(""), `preds.jsonl:2: field "instance_id": a second prediction`)
	predCase("malformed JSON", pred("")+`{"instance_id": `+"\n", `malformed JSON`)
	predCase("a line that is no object", pred("")+"[1]\n", `preds.jsonl:2: is a JSON list`)
	predCase("two objects on a line", strings.TrimSpace(pred(""))+" "+pred(""), `more than one JSON value`)
	predCase("a byte-order mark", "\xef\xbb\xbf"+pred(""), "byte-order mark")
	predCase("invalid UTF-8", `{"instance_id": "`+lv1+`", "model_name_or_path": "caf`+"\xe9"+`", "model_patch": ""}`+"\n", `invalid UTF-8`)
	predCase("nothing", "\n\n", "holds no predictions")
	predCase("an empty list", "[]", "holds no predictions")
	predCase("a duplicate key", `{"instance_id": "`+lv1+`", "model_name_or_path": "m", "model_patch": "", "model_patch": "x"}`+"\n", `is given twice`)
	predCase("a list with a bad element", "[\n"+strings.TrimSpace(pred(""))+",\n"+`{"instance_id": "`+lv1+`", "model_name_or_path": "m", "cost": "x"}`+"\n]", `preds.jsonl:3: field "cost"`)
	predCase("a mapping whose key and id differ", "{\n  \"a-1\": {\"instance_id\": \""+lv1+"\", \"model_name_or_path\": \"m\", \"model_patch\": \"\"}\n}", `is "`+lv1+`" but the prediction's key is "a-1"`)
	cases = append(cases, tc{name: "predictions: a missing file", args: append(append([]string{}, run...), "--predictions", filepath.Join(root, "nope.jsonl")), code: 1, want: "no such file"},
		tc{name: "predictions: a folder", args: append(append([]string{}, run...), "--predictions", root), code: 1, want: "reading the predictions"})

	// featbench.toml's [eval]: file, line and field. The line added sits
	// just below the [eval] header, wherever the file puts it.
	evalLine := 1 + strings.Count(string(cfgRaw[:strings.Index(string(cfgRaw), "[eval]\n")]), "\n")
	for _, c := range []struct{ line, field string }{
		{`docker_host = "not a url"`, "eval.docker_host"},
		{`docker_host = "http://example.org"`, "eval.docker_host"},
		{`rerun_sample = -1`, "eval.rerun_sample"},
		{`rerun_whole_max = -1`, "eval.rerun_whole_max"},
		{`backend = "k8s"`, "eval.backend"},
		{`workres = 2`, "eval.workres"},
		{`timeout = "5m"`, "eval.timeout"},
	} {
		cases = append(cases, tc{name: "config: " + c.line, args: append(append([]string{}, run...), "--gold"), config: c.line, code: 1, want: fmt.Sprintf(`featbench.toml:%d: field "%s"`, evalLine+1, c.field)})
	}
	for _, c := range []struct{ key, value, field string }{
		{"workers", "0", "eval.workers"}, {"workers", "300", "eval.workers"}, {"workers", `"two"`, "eval.workers"},
		{"test_file_timeout", `"soon"`, "eval.test_file_timeout"}, {"test_file_timeout", `"-1s"`, "eval.test_file_timeout"},
		{"test_timeout", `"-1s"`, "eval.test_timeout"}, {"instance_timeout", `"0"`, "eval.instance_timeout"},
		{"instance_timeout", `"soon"`, "eval.instance_timeout"}, {"cpus", `"two"`, "eval.cpus"},
		{"memory", `"lots"`, "eval.memory"}, {"memory", `"-1g"`, "eval.memory"}, {"cpus", "0", "eval.cpus"}, {"cpus", "-1", "eval.cpus"},
		{"pids", "3", "eval.pids"}, {"pids", "2000000000", "eval.pids"}, {"image_prefix", `"Bad Prefix"`, "eval.image_prefix"},
		{"runs", `""`, "eval.runs"},
	} {
		cases = append(cases, tc{name: "config: " + c.key + " = " + c.value, args: append(append([]string{}, run...), "--gold"),
			config: "!" + c.key + " = " + c.value, code: 1, want: `field "` + c.field + `"`})
	}

	cases = append(cases, tc{name: `config: backend = "swarm" without a manager`, args: append(append([]string{}, run...), "--gold"),
		config: `backend = "swarm"`, code: 1, want: fmt.Sprintf(`featbench.toml:%d: field "eval.swarm.manager"`, evalLine)})

	// eval infer's flags.
	infer := []string{"infer", "--root", root, "--dataset", "example/v4", "--split", "lite", "--run-id", "bad"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no agent", nil, 2, "--agent is required"},
		{"an unknown agent", []string{"--agent", "nobody"}, 2, "no such [[agents]] table"},
		{"--workers 0", []string{"--agent", "shell-loop", "--workers", "0"}, 2, "--workers 0: want 1 to 256"},
		{"--workers -1", []string{"--agent", "shell-loop", "--workers", "-1"}, 2, "--workers -1: want 1 to 256"},
		{"--upstream that is not a URL", []string{"--agent", "shell-loop", "--upstream", "not a url"}, 2, `--upstream "not a url": want an http(s) URL`},
		{"--upstream without a host", []string{"--agent", "shell-loop", "--upstream", "http://"}, 2, "--upstream"},
		{"--upstream of another scheme", []string{"--agent", "shell-loop", "--upstream", "ftp://example.org/v1"}, 2, "--upstream"},
	} {
		cases = append(cases, tc{name: "infer: " + c.name, args: append(append([]string{}, infer...), c.args...), code: c.code, want: c.want})
	}
	if len(cases) < 95 {
		t.Fatalf("%d cases; issue 29 asks for at least 95", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := string(cfgRaw)
			switch {
			case strings.HasPrefix(c.config, "!"):
				// Replaces the key's line in [eval] (keeping the line number).
				k, _, _ := strings.Cut(c.config[1:], " = ")
				lines := strings.Split(cfg, "\n")
				done := false
				for i := evalLine; i < len(lines) && !done; i++ {
					if strings.HasPrefix(lines[i], k+" = ") {
						lines[i], done = c.config[1:], true
					}
				}
				if !done {
					t.Fatalf("no %s in [eval]", k)
				}
				cfg = strings.Join(lines, "\n")
			case c.config != "":
				cfg = strings.Replace(cfg, "[eval]\n", "[eval]\n"+c.config+"\n", 1)
			}
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{}, c.args...)
			if c.preds != "" {
				p := filepath.Join(t.TempDir(), "preds.jsonl")
				if err := os.WriteFile(p, []byte(c.preds), 0o644); err != nil {
					t.Fatal(err)
				}
				for i, a := range args {
					if a == "PREDS" {
						args[i] = p
					}
				}
			}
			_, errOut, code := runEval(t, args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, want %d with %q:\n%.1500s", code, c.code, c.want, errOut)
			}
			if strings.Contains(errOut, "featbench-bad-inputs.sock") {
				t.Errorf("got as far as the engine:\n%.500s", errOut)
			}
		})
	}
	if err := os.WriteFile(cfgPath, cfgRaw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestValidateOneFolder: validate checks the folder it is given and the
// dataset it depends on, not the rest of data/: a broken submission
// elsewhere neither blocks it nor is blamed on it.
func TestValidateOneFolder(t *testing.T) {
	root := copyProject(t)
	broken := filepath.Join(root, "data", "submissions", "example", "v2", "lite", "20261123_tiny-agent", "metadata.toml")
	if err := os.WriteFile(broken, []byte("name = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(root, "data", "submissions", "example", "v4", "lite", "20261123_gold")
	if out, errOut, code := runEval(t, "validate", good, "--root", root); code != 0 || !strings.Contains(out, "results agree with the logs") {
		t.Errorf("validating a good folder beside a broken one: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runEval(t, "validate", filepath.Dir(broken), "--root", root); code == 0 || !strings.Contains(errOut, broken+":1") {
		t.Errorf("validating the broken folder: exit %d, want its problem named:\n%s", code, errOut)
	}
	if _, errOut, code := runEval(t, "validate", filepath.Join(root, "data", "datasets"), "--root", root); code == 0 || !strings.Contains(errOut, "is not a submission folder") {
		t.Errorf("validating a folder that is no submission: exit %d\n%s", code, errOut)
	}
}
