% laplace_pima.m: reference values of GPML's binary Laplace approximation
% (infLaplace, meanZero) on data/pima, for gpc's tests/cli/gpml.bats.
%
% Run from anywhere, with GPML_DIR naming an unpacked GPML 4.2:
%   GPML_DIR=/path/to/gpml octave-cli tests/ref/gpml/laplace_pima.m
% It writes one file per case into tests/ref/gpml/ (see README there) and
% prints the same numbers.  GPML itself is not part of gpc.

gpml = getenv('GPML_DIR');
if isempty(gpml), error('set GPML_DIR to an unpacked GPML 4.2'); end
addpath(gpml); run(fullfile(gpml, 'startup.m'));

here = fileparts(mfilename('fullpath'));
root = fileparts(fileparts(fileparts(here)));
X = load(fullfile(root, 'data', 'pima', 'X-train.txt'));
y = load(fullfile(root, 'data', 'pima', 'y-train.txt'));
D = size(X, 2);

% The mode to machine precision, so that the reference does not carry
% GPML's stopping error.  Its IRLS loop stops when a step no longer lowers
% the objective Psi (by irls_tol, default 1e-6; here 0), but Psi is flat to
% second order at the mode: it stalls in rounding with alpha - dlp still
% near 1e-8 relative, which moves the gradient in the 7th to 9th digit.
% infLaplace remembers its last alpha and starts the next call there with at
% least one more Newton step, so calling it again (same hyperparameters)
% polishes the mode; see laplace_case below.
opt.irls_tol = 0;
opt.irls_maxit = 200;

% infLaplace's nlZ and dnlZ at hyp, called again from its own last alpha
% until the optimality residual |alpha - dlp| (alpha = dlp at the mode) no
% longer falls; returns the call with the smallest residual.
function [nlZ, dnlZ, calls, resid] = laplace_case(hyp, cov, lik, X, y, opt)
  clear infLaplace;  % forget the warm start of the previous case
  K = feval(cov{:}, hyp.cov, X);
  resid = Inf;
  for c = 1:50
    [post, nlZ_c, dnlZ_c] = infLaplace(hyp, {@meanZero}, cov, lik, X, y, opt);
    [~, dlp] = feval(lik{:}, hyp.lik, y, K * post.alpha, [], 'infLaplace');
    r = norm(post.alpha - dlp) / max([norm(dlp), 1]);
    if r >= resid, break; end
    nlZ = nlZ_c; dnlZ = dnlZ_c; calls = c; resid = r;
    if r < 1e-15, break; end
  end
end

% gpc name, GPML covariance
kernels = { 'ard',         {@covSEard};
            'matern32ard', {@covMaternard, 3};
            'matern52ard', {@covMaternard, 5} };
liks = { 'logistic', @likLogistic;
         'probit',   @likErf };
% Hyperparameters as GPML orders them: log ell_1..log ell_D, log sf.
% iso: lengthscale 2 in every column (on pima's raw columns most pairs of
% rows are far apart, so K is near v0 I); scaled: each lengthscale near its
% column's spread; varied: lengthscales and amplitude away from both.
settings = { 'iso',    [log(2) * ones(D, 1); 0.5];
             'scaled', [log([3; 30; 12; 12; 6; 0.3; 11]); 0.5];
             'varied', [log([1.5; 45; 20; 8; 4; 0.6; 15]); 1.2] };

for k = 1:rows(kernels)
  for l = 1:rows(liks)
    for s = 1:rows(settings)
      name = sprintf('laplace_pima_%s_%s_%s', kernels{k, 1}, liks{l, 1}, settings{s, 1});
      hyp = struct('mean', [], 'lik', [], 'cov', settings{s, 2});
      [nlZ, dnlZ, calls, resid] = laplace_case(hyp, kernels{k, 2}, {liks{l, 2}}, X, y, opt);
      text = sprintf('# GPML 4.2 infLaplace meanZero %s %s on data/pima X-train y-train\n', ...
                     func2str(kernels{k, 2}{1}), func2str(liks{l, 2}));
      if numel(kernels{k, 2}) > 1
        text = [text sprintf('# covMaternard d = %d\n', kernels{k, 2}{2})];
      end
      text = [text sprintf('# infLaplace calls %d, |alpha - dlp| / |dlp| at the mode %.3g\n', ...
                           calls, resid)];
      text = [text sprintf('kernel %s\nlikelihood %s\n', kernels{k, 1}, liks{l, 1})];
      text = [text 'hyp.cov' sprintf(' %.17g', hyp.cov) sprintf('\n')];
      text = [text sprintf('nlZ %.17g\n', nlZ)];
      text = [text 'dnlZ.cov' sprintf(' %.17g', dnlZ.cov) sprintf('\n')];
      fid = fopen(fullfile(here, [name '.txt']), 'w');
      if fid < 0, error('cannot write %s.txt in %s', name, here); end
      fputs(fid, text); fclose(fid);
      printf('== %s\n%s', name, text);
    end
  end
end
