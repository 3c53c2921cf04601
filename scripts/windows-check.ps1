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
# output crosses the logon, with the attack set of spec 000 (files, the network modes and a
# local port on loopback and the LAN address, two sessions at once, kill of the host), and
# the appcontainer provider's write in a read-write folder.  Last line: "N passed, N failed, N skipped"; exit 1 when
# anything failed.  It changes nothing it does not undo: no setup, no remove (docs/windows.md).
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

# The attack set of spec 000, run as the sandbox account through `owsbx run`.
function Attacks([string]$provider) {
	$work = (New-Item -ItemType Directory -Path (Join-Path $env:TEMP "owstest-win-$PID") -Force).FullName
	$home8 = $env:USERPROFILE
	try {
		# Files: the rw folder is written, the person's profile is neither listed nor written.
		$r = Owsbx @('run', '--rw', $work, '--', 'cmd', '/c', "echo x> `"$work\rw.txt`"")
		Result ($r.Code -eq 0 -and (Test-Path "$work\rw.txt")) "files: the rw folder is writable"
		$r = Owsbx @('run', '--rw', $work, '--', 'cmd', '/c', "dir `"$home8`"")
		Result ($r.Code -ne 0) "files: the person's profile cannot be listed (exit $($r.Code))"
		$r = Owsbx @('run', '--rw', $work, '--', 'cmd', '/c', "echo x> `"$home8\owstest-escaped.txt`"")
		Result (-not (Test-Path "$home8\owstest-escaped.txt")) "files: nothing is written in the profile"
		Remove-Item "$home8\owstest-escaped.txt" -ErrorAction SilentlyContinue
		# Network: none reaches nothing; a local port outside 47800-47899 is out of reach on
		# loopback and on the machine's LAN address (the WFP loopback flag).
		$l = [System.Net.Sockets.TcpListener]::new([System.Net.IPAddress]::IPv6Any, 0)
		$l.Server.DualMode = $true
		$l.Start()
		$port = $l.LocalEndpoint.Port
		$lan = (Get-NetIPAddress -AddressFamily IPv4 | Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' } | Select-Object -First 1).IPAddress
		foreach ($net in 'none', 'allowlist') {
			foreach ($addr in @('127.0.0.1', $lan)) {
				if (-not $addr) { continue }
				$r = Owsbx @('run', '--net', $net, '--', 'curl.exe', '-s', '-m', '5', "http://${addr}:$port/")
				Result ($r.Code -ne 0) "network ${net}: a local port outside the proxy's range on $addr is out of reach (curl exit $($r.Code))"
			}
		}
		$l.Stop()
		$r = Owsbx @('run', '--net', 'none', '--', 'curl.exe', '-s', '-m', '10', 'https://example.com/')
		Result ($r.Code -ne 0) "network none: a host outside cannot be reached (curl exit $($r.Code))"
		$r = Owsbx @('run', '--net', 'open', '--', 'curl.exe', '-s', '-o', 'NUL', '-m', '20', '--ssl-revoke-best-effort', 'https://example.com/')
		Result ($r.Code -eq 0) "network open: a host outside is reached (curl exit $($r.Code))"
		# Two sessions at once on one account: the second's open and close leave the first its grants.
		$first = Start-Process -PassThru -NoNewWindow -FilePath (Join-Path $Dir 'owsbx.exe') -ArgumentList @('run', '--rw', "`"$work`"", '--', 'cmd', '/c', "ping -n 8 127.0.0.1 >nul & echo first> `"$work\first.txt`"")
		Start-Sleep -Seconds 2
		$r = Owsbx @('run', '--rw', $work, '--', 'cmd', '/c', "echo second> `"$work\second.txt`"")
		$first.WaitForExit()
		Result ((Test-Path "$work\second.txt") -and (Test-Path "$work\first.txt") -and $first.ExitCode -eq 0) "two sessions at once: the first keeps its folder after the second closed"
		# Kill of the host: the job ends every process of the session.
		$host1 = Start-Process -PassThru -NoNewWindow -FilePath (Join-Path $Dir 'owsbx.exe') -ArgumentList @('run', '--', 'ping', '-n', '120', '127.0.0.2')
		Start-Sleep -Seconds 3
		Stop-Process -Id $host1.Id -Force
		Start-Sleep -Seconds 2
		$left = @(Get-CimInstance Win32_Process -Filter "Name='PING.EXE'" | Where-Object { $_.CommandLine -like '*127.0.0.2*' })
		Result ($left.Count -eq 0) "kill of the host: no process of the session is left ($($left.Count))"
		$left | ForEach-Object { Stop-Process -Id $_.ProcessId -Force -ErrorAction SilentlyContinue }
	} finally {
		Remove-Item -Recurse -Force $work -ErrorAction SilentlyContinue
	}
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
	Attacks 'windows'
} else {
	$script:skipped++
	Write-Output "ok - the windows provider # SKIP this machine is not set up (owsbx machine sandbox setup, elevated)"
}
# The appcontainer provider needs no setup: a write from inside needs the Low label.
$work = New-Item -ItemType Directory -Path (Join-Path $env:TEMP "owstest-ac-$PID") -Force
$r = Owsbx @('run', '--provider', 'appcontainer', '--net', 'none', '--rw', $work.FullName, '--', 'cmd', '/c', "echo x> `"$($work.FullName)\ac.txt`"")
Result ($r.Code -eq 0 -and (Test-Path "$($work.FullName)\ac.txt")) "appcontainer: a command writes in its read-write folder (exit $($r.Code))"
Remove-Item -Recurse -Force $work -ErrorAction SilentlyContinue

Write-Output "$($script:pass) passed, $($script:fail) failed, $($script:skipped) skipped"
if ($script:fail -gt 0) { exit 1 }
exit 0
