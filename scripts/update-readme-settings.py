# Replaces the configuration table of README.md with the output of scripts/settings-table.ts.
import re, subprocess, sys
table = subprocess.run(['npx', 'tsx', 'scripts/settings-table.ts'], capture_output=True, text=True, check=True).stdout.strip()
readme = open('README.md').read()
new = re.sub(r'\| Environment \| Flag \| Default \| Meaning \|\n(\|.*\n)+', table + '\n', readme, count=1)
open('README.md', 'w').write(new)
