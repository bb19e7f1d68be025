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

% Newton (IRLS) run to convergence at machine precision, not GPML's default
% 1e-6 decrease of the objective, so that the reference does not carry the
% stopping error: with tol 0 the loop ends when a step no longer lowers Psi.
opt.irls_tol = 0;
opt.irls_maxit = 200;

% gpc name, GPML covariance
kernels = { 'ard',         {@covSEard};
            'matern32ard', {@covMaternard, 3};
            'matern52ard', {@covMaternard, 5} };
liks = { 'logistic', @likLogistic;
         'probit',   @likErf };
% Hyperparameters as GPML orders them: log ell_1..log ell_D, log sf.
% iso: the unit lengthscale of 2 everywhere (on pima's raw columns most pairs
% are far apart, so K is near v0 I); scaled: each lengthscale near its
% column's spread; varied: lengthscales and amplitude away from both.
settings = { 'iso',    [log(2) * ones(D, 1); 0.5];
             'scaled', [log([3; 30; 12; 12; 6; 0.3; 11]); 0.5];
             'varied', [log([1.5; 45; 20; 8; 4; 0.6; 15]); 1.2] };

for k = 1:rows(kernels)
  for l = 1:rows(liks)
    for s = 1:rows(settings)
      name = sprintf('laplace_pima_%s_%s_%s', kernels{k, 1}, liks{l, 1}, settings{s, 1});
      hyp = struct('mean', [], 'lik', [], 'cov', settings{s, 2});
      clear infLaplace;  % forget the warm start of the previous case
      [post, nlZ, dnlZ] = infLaplace(hyp, {@meanZero}, kernels{k, 2}, {liks{l, 2}}, X, y, opt);
      text = sprintf('# GPML 4.2 infLaplace meanZero %s %s on data/pima X-train y-train\n', ...
                     func2str(kernels{k, 2}{1}), func2str(liks{l, 2}));
      if numel(kernels{k, 2}) > 1
        text = [text sprintf('# covMaternard d = %d\n', kernels{k, 2}{2})];
      end
      text = [text sprintf('kernel %s\nlikelihood %s\n', kernels{k, 1}, liks{l, 1})];
      text = [text 'hyp.cov' sprintf(' %.17g', hyp.cov) sprintf('\n')];
      text = [text sprintf('nlZ %.17g\n', nlZ)];
      text = [text 'dnlZ.cov' sprintf(' %.17g', dnlZ.cov) sprintf('\n')];
      fid = fopen(fullfile(here, [name '.txt']), 'w');
      fputs(fid, text); fclose(fid);
      printf('== %s\n%s', name, text);
    end
  end
end
