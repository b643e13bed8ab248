package main

import (
	"context"
	"fmt"
	"os"

	"github.com/featbench/featbench/bench"
)

func main() {
	data, err := bench.Load(context.Background(), "/work/main/data")
	if err != nil {
		fmt.Println("ERROR:", err)
		os.Exit(1)
	}
	for _, ds := range data.Datasets {
		fmt.Printf("dataset %s (%s) released %s: %d instances, repos %d\n", ds.Key(), ds.DisplayName(), ds.ReleaseDate.Format("2006-01-02"), len(ds.Instances), len(ds.Repos))
		for _, sp := range ds.Splits {
			fmt.Printf("  split %s: %d\n", sp.Name, ds.SplitSize(sp.Name))
			for _, s := range data.SubmissionsFor(ds, sp.Name) {
				res := 0
				for _, r := range s.Results {
					if r.Resolved {
						res++
					}
				}
				fmt.Printf("    %s %q date %s: %d results, %d resolved, attempts %d\n", s.Folder, s.Name, s.Date.Format("2006-01-02"), len(s.Results), res, s.Attempts)
			}
		}
	}
}
