# For a Windows machine: runs the cross-built files (make windows, on Linux) where only
# Windows can prove them.  Copy build\win to the machine (owsbx.exe, owsbx-runner.exe,
# owsandbox.dll, test\*.exe) with this script, then, in PowerShell:
#
#   powershell -ExecutionPolicy Bypass -File windows-check.ps1 [-Dir C:\path\to\win]
#
# Runs every test program (TAP; what Wine skips as "not provable here" runs for real
# where Windows allows it), then owsbx.exe's smoke tests: version, report --json,
# run --provider direct -- cmd /c echo hi, and, when this machine is set up
# (owsbx machine sandbox setup, elevated), the same through the windows provider, whose
# output crosses the logon.  Last line: "N passed, N failed, N skipped"; exit 1 when
# anything failed.  It changes nothing: no setup, no remove (docs/windows.md).
param([string]$Dir = (Join-Path $PSScriptRoot '..\build\win'))
# Continue: a native program's stderr must not stop the script (Windows PowerShell 5).
$ErrorActionPreference = 'Continue'
$Dir = (Resolve-Path $Dir).Path
$script:pass = 0; $script:fail = 0; $script:skipped = 0

function Result([bool]$ok, [string]$what) {
	if ($ok) { $script:pass++; Write-Output "ok - $what" }
	else { $script:fail++; Write-Output "not ok - $what" }
}

# Runs owsbx.exe with its arguments; stdout as text, and the exit code.
function Owsbx([string[]]$argv) {
	$out = & (Join-Path $Dir 'owsbx.exe') @argv 2>$null
	return @{ Out = ($out -join "`n"); Code = $LASTEXITCODE }
}

Push-Location $Dir
try {
	foreach ($t in Get-ChildItem (Join-Path $Dir 'test\*.exe')) {
		$lines = & $t.FullName 2>$null
		$p = @($lines | Where-Object { $_ -match '^ok ' -and $_ -notmatch '# SKIP' }).Count
		$s = @($lines | Where-Object { $_ -match '^ok .*# SKIP' }).Count
		$f = @($lines | Where-Object { $_ -match '^not ok' }).Count
		if (-not ($lines | Where-Object { $_ -match '^1\.\.\d+$' })) { $f++ }
		'{0,-28} {1,3} passed, {2} failed, {3} skipped' -f "test\$($t.BaseName)", $p, $f, $s
		$lines | Where-Object { $_ -match '^not ok|# SKIP' } | ForEach-Object { "    $_" }
		$script:pass += $p; $script:fail += $f; $script:skipped += $s
	}
} finally { Pop-Location }

$r = Owsbx @('version')
Result ($r.Code -eq 0 -and $r.Out -match '^owsbx \d+\.\d+\.\d+$') "owsbx.exe version ($($r.Out))"
$r = Owsbx @('report', '--json')
$caps = $null
try { $caps = ($r.Out | ConvertFrom-Json).capabilities } catch { }
Result ($r.Code -eq 0 -and $caps.Count -gt 0) "owsbx.exe report --json: JSON with $($caps.Count) capabilities"
$r = Owsbx @('run', '--provider', 'direct', '--', 'cmd', '/c', 'echo', 'hi')
Result ($r.Code -eq 0 -and $r.Out.Trim() -eq 'hi') "run --provider direct -- cmd /c echo hi (exit $($r.Code))"
$r = Owsbx @('run', '--provider', 'direct', '--', 'cmd', '/c', 'exit', '7')
Result ($r.Code -eq 7) "the command's exit code (7: $($r.Code))"

$st = Owsbx @('machine', 'sandbox', 'status')
if ($st.Code -eq 0) {
	$r = Owsbx @('run', '--', 'cmd', '/c', 'echo', 'hi')
	Result ($r.Code -eq 0 -and $r.Out.Trim() -eq 'hi') "run (windows provider) -- cmd /c echo hi: stdout across the logon (exit $($r.Code))"
	$r = Owsbx @('run', '--', 'cmd', '/c', 'exit', '7')
	Result ($r.Code -eq 7) "the windows provider passes the exit code (7: $($r.Code))"
} else {
	$script:skipped++
	Write-Output "ok - the windows provider # SKIP this machine is not set up (owsbx machine sandbox setup, elevated)"
}

Write-Output "$($script:pass) passed, $($script:fail) failed, $($script:skipped) skipped"
if ($script:fail -gt 0) { exit 1 }
exit 0
