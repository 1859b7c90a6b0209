#!/bin/bash
# Oracle of this sample task: run from /app.
set -e
printf '#!/bin/sh\necho "hello, eval"\n' > bin/greet
chmod +x bin/greet
