package ui

import (
	"html/template"
	"net/url"
	"strings"
	"time"
)

var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"join": strings.Join,
	"p":    url.PathEscape,
	"sub":  func(a, b int64) int64 { return a - b },
	"list": func() []string { return []string{"", "none", "running_summary", "rag_augmented"} },
}

// parsePages pairs the layout with each page; a broken template is a
// programming error caught by any test.
func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range []string{"chats", "chat", "playground", "status", "confirm", "login", "error"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}
