# Claude Code: `claude mcp add [options] <name> -- <command> [args...]`
# (options before the name; -- separates deskhand's own arguments).
claude mcp add deskhand -- npx -y deskhand serve
claude mcp add deskhand -- npx -y deskhand serve --virtual-display 1920x1080
# A remote desktop served with `deskhand serve --http` (see deploy/README.md):
claude mcp add --transport http --header "Authorization: Bearer $DESKHAND_HTTP_TOKEN" deskhand https://desk-0.example.internal:8443/mcp
